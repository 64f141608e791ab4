/* report.js - the report's timeline (decode/out_report.c embeds it after
 * uPlot): the phase band (merged logs: one per host), one uPlot per (PMU kind, metric) with the
 * phases shaded behind it, and the CPU and GPU lanes, all on one x axis
 * (seconds from the first trigger): zooming or panning one plot moves
 * every other one and the band; a legend entry hides or shows its series.
 *
 * The data (the #t4-data element, JSON) holds columns of a uniform grid
 * (x0 + i * w): per series two values per column, the column's extremes
 * in the order they came, null where nothing was; per lane the share of
 * each column its slices cover. When done, <body> gets data-t4-ready
 * (and data-t4-first-draw: the time the first plot was drawn), which the
 * tests and the benchmark wait for.
 */
(function () {
	"use strict";
	var errors = document.getElementById("t4-errors");
	window.addEventListener("error", function (e) {
		errors.textContent += "error: " + e.message + "\n";
	});

	var D = JSON.parse(document.getElementById("t4-data").textContent);
	var root = document.getElementById("t4-timeline");
	var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
		"#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
		"#7b4173", "#3182bd"];
	var PHASE_RGB = ["66,133,244", "251,140,0", "52,168,83", "171,71,188", "0,172,193",
		"229,57,53", "124,179,66", "255,193,7", "92,107,192", "141,110,99"];
	/* the shading: a single log's phases (merged logs: none; each host's
	 * phases are a band of its own, D.hosts) */
	var spans = D.phases.spans;
	var plots = [], syncing = false, bands = [];

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined) e.textContent = text;
		return e;
	}

	/* 4 significant digits, an exponent only far from 1 */
	function fmt(v) {
		if (v === null || v === undefined || !isFinite(v)) return "-";
		var a = Math.abs(v);
		if (a !== 0 && (a >= 1e7 || a < 1e-3)) return v.toExponential(3);
		return String(+v.toPrecision(4));
	}

	function phaseFill(s, alpha) {
		return "rgba(" + PHASE_RGB[s[2] % PHASE_RGB.length] + "," + alpha + ")";
	}


	/* The x values: two per column for the extremes, one for the lanes. */
	var X2 = new Array(2 * D.n), X1 = new Array(D.n);
	for (var i = 0; i < D.n; i++) {
		X2[2 * i] = D.x0 + (i + 0.25) * D.w;
		X2[2 * i + 1] = D.x0 + (i + 0.75) * D.w;
		X1[i] = D.x0 + (i + 0.5) * D.w;
	}

	function plotWidth() {
		return Math.max(400, root.clientWidth - 4);
	}

	/* The first span that ends after t (spans are in time order). */
	function firstSpan(t) {
		var a = 0, b = spans.length;
		while (a < b) {
			var m = (a + b) >> 1;
			if (spans[m][1] <= t) a = m + 1; else b = m;
		}
		return a;
	}

	function shade(u) {
		var x = u.scales.x, ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
		if (x.min === null || x.min === undefined) return;
		var last = -Infinity; /* painted up to here: spans under a pixel never pile up */
		ctx.save();
		for (var i = firstSpan(x.min); i < spans.length && spans[i][0] < x.max; i++) {
			var s = spans[i];
			var a = Math.max(u.valToPos(Math.max(s[0], x.min), "x", true), last);
			var b = u.valToPos(Math.min(s[1], x.max), "x", true);
			if (b <= last) continue;
			ctx.fillStyle = phaseFill(s, 0.13);
			ctx.fillRect(a, top, Math.max(b - a, 1), h);
			last = Math.max(b, a + 1);
		}
		ctx.restore();
	}

	function drawn(u) {
		if (!document.body.hasAttribute("data-t4-first-draw"))
			document.body.setAttribute("data-t4-first-draw", String(performance.now()));
		if (u === plots[0]) /* its layout settles over the first draws */
			placeBands(u.scales.x.min, u.scales.x.max, u);
	}

	/* One plot zoomed or panned: every other one follows, and the band. */
	function onScale(u, key) {
		if (key !== "x" || syncing) return;
		syncing = true;
		var mn = u.scales.x.min, mx = u.scales.x.max;
		plots.forEach(function (p) {
			if (p !== u) p.setScale("x", { min: mn, max: mx });
		});
		syncing = false;
		placeBands(mn, mx, u);
	}

	function placeBands(mn, mx, u) {
		bands.forEach(function (b) { b.place(mn, mx, u); });
	}

	/* A phase band: a log's phases (ph: exact, more, spans, names); the
	 * first band is #t4-band, every band a .t4-band. */
	function makeBand(title, ph) {
		var box = el("div"), strip = el("div", "t4-band"), sp = ph.spans;
		if (!bands.length)
			strip.id = "t4-band";
		box.appendChild(el("h2", null, title));
		box.appendChild(strip);
		var divs = sp.map(function (s) {
			var d = el("div", "t4-span", ph.names[s[2]]);
			d.style.background = phaseFill(s, 0.45);
			d.title = ph.names[s[2]] + "#" + s[3] + ": " + s[0].toFixed(6) + " s to " +
				s[1].toFixed(6) + " s (" + (s[1] - s[0]).toFixed(6) + " s" +
				(ph.exact ? ", exact boundaries" : ", at triggers") + ")";
			strip.appendChild(d);
			return d;
		});
		if (ph.more)
			box.appendChild(el("div", "t4-band-note", ph.more +
				" more phases not drawn ('t410trace decode -f phases' lists them all)"));
		root.appendChild(box);
		return {
			place: function (mn, mx, u) {
				/* over the plotting area of u (its overlay element) */
				var o = u ? u.over.getBoundingClientRect() : null;
				var p = box.getBoundingClientRect();
				strip.style.marginLeft = o ? o.left - p.left + "px" : "0";
				strip.style.width = o ? o.width + "px" : "100%";
				var len = mx - mn || 1;
				divs.forEach(function (d, i) {
					var a = (sp[i][0] - mn) / len * 100, b = (sp[i][1] - mn) / len * 100;
					if (b <= 0 || a >= 100) {
						d.style.display = "none";
						return;
					}
					a = Math.max(a, 0);
					b = Math.min(b, 100);
					d.style.display = "";
					d.style.left = a + "%";
					d.style.width = (b - a) + "%";
				});
			}
		};
	}

	function plotOpts(title, height, series) {
		return {
			title: title,
			width: plotWidth(),
			height: height,
			series: series,
			scales: { x: { time: false } },
			cursor: { sync: { key: "t4" }, drag: { x: true, y: false } },
			hooks: { drawClear: [shade], draw: [drawn], setScale: [onScale] }
		};
	}

	function makePlot(p, into) {
		var box = el("div", "t4-plot");
		into.appendChild(box);
		var unit = p.unit ? " " + p.unit : "";
		var series = [{ label: "time", value: function (u, v) { return v === null ? "-" : v.toFixed(6) + " s"; } }];
		var data = [X2];
		p.series.forEach(function (s, i) {
			series.push({
				label: s.label,
				stroke: COLORS[i % COLORS.length],
				width: 1,
				points: { show: false },
				value: function (u, v) { return fmt(v) + unit; }
			});
			data.push(s.y);
		});
		var o = plotOpts(p.kind + ": " + p.metric + (p.unit ? " (" + p.unit + ")" : ""), 200, series);
		o.axes = [{ label: "s from the first trigger" },
			{ label: p.unit, size: 70, values: function (u, vs) { return vs.map(fmt); } }];
		var u = new uPlot(o, data, box);
		var t = box.querySelector(".u-title");
		if (t) t.title = p.metric + " = " + p.formula;
		plots.push(u);
	}

	function makeLanes(group, lanes, into) {
		var k = lanes.length;
		var box = el("div", "t4-plot t4-lanes");
		into.appendChild(box);
		var series = [{ label: "time", value: function (u, v) { return v === null ? "-" : v.toFixed(6) + " s"; } }];
		var data = [X1];
		lanes.forEach(function (l, i) {
			series.push({
				label: l.label,
				stroke: COLORS[i % COLORS.length],
				paths: function () { return null; },
				points: { show: false },
				value: function (u, v) { return v === null ? "-" : (v * 100).toFixed(1) + " % busy"; }
			});
			data.push(l.busy);
		});
		function draw(u) {
			var x = u.scales.x, ctx = u.ctx;
			if (x.min === null || x.min === undefined) return;
			var c0 = Math.max(0, Math.floor((x.min - D.x0) / D.w));
			var c1 = Math.min(D.n - 1, Math.ceil((x.max - D.x0) / D.w));
			ctx.save();
			lanes.forEach(function (l, i) {
				if (!u.series[i + 1].show) return;
				var y0 = u.valToPos(k - i, "y", true), y1 = u.valToPos(k - i - 1, "y", true);
				ctx.fillStyle = COLORS[i % COLORS.length];
				for (var c = c0; c <= c1; c++) {
					var v = l.busy[c];
					if (!v) continue;
					var a = u.valToPos(D.x0 + c * D.w, "x", true);
					var b = u.valToPos(D.x0 + (c + 1) * D.w, "x", true);
					ctx.globalAlpha = Math.min(1, 0.2 + 0.8 * v);
					ctx.fillRect(a, y0 + 1, Math.max(b - a, 1), y1 - y0 - 2);
				}
			});
			ctx.restore();
		}
		var o = plotOpts(group + " activity (share of each column's time the workload ran)",
			Math.min(110 + 26 * k, 800), series);
		o.scales.y = { auto: false, range: [0, k] };
		o.axes = [{ label: "s from the first trigger" }, {
			size: 150,
			splits: function () { return lanes.map(function (l, i) { return k - i - 0.5; }); },
			values: function (u, vs) { return vs.map(function (v) { var i = Math.round(k - 0.5 - v); return lanes[i] ? lanes[i].label : ""; }); }
		}];
		o.hooks.draw.push(draw);
		o.legend = { show: k <= 32 };
		plots.push(new uPlot(o, data, box));
	}

	function groups() {
		var seen = {};
		D.plots.forEach(function (p) {
			if (!seen[p.kind]) {
				seen[p.kind] = el("section", "t4-group");
				seen[p.kind].appendChild(el("h2", null, p.kind));
				root.appendChild(seen[p.kind]);
			}
			makePlot(p, seen[p.kind]);
		});
		["CPU", "GPU"].forEach(function (g) {
			var lanes = D.lanes.filter(function (l) { return l.group === g; });
			if (!lanes.length) return;
			var s = el("section", "t4-group");
			s.appendChild(el("h2", null, g + " activity"));
			root.appendChild(s);
			makeLanes(g, lanes, s);
		});
	}

	if (D.hosts) /* merged logs: one lane per host, on one time axis */
		D.hosts.forEach(function (h) {
			bands.push(makeBand("Phases on " + h.label + " (placed within +-" +
				fmt(h.bound_ms) + " ms)", h.phases));
		});
	else
		bands.push(makeBand("Phases", D.phases));
	if (!D.n)
		root.appendChild(el("p", null, "No intervals to draw: the log holds no return packets."));
	groups();
	if (D.series_left_out)
		root.appendChild(el("p", null, D.series_left_out + " series left out (more than the report draws)"));
	if (plots.length) {
		var u = plots[0];
		placeBands(u.scales.x.min, u.scales.x.max, u);
	} else {
		var mn = Infinity, mx = -Infinity;
		(D.hosts ? D.hosts.map(function (h) { return h.phases; }) : [D.phases]).forEach(function (ph) {
			if (!ph.spans.length) return;
			mn = Math.min(mn, ph.spans[0][0]);
			mx = Math.max(mx, ph.spans[ph.spans.length - 1][1]);
		});
		if (mn < mx)
			placeBands(mn, mx, null);
	}
	window.addEventListener("resize", function () {
		plots.forEach(function (p) { p.setSize({ width: plotWidth(), height: p.height }); });
		if (plots.length) placeBands(plots[0].scales.x.min, plots[0].scales.x.max, plots[0]);
	});
	document.body.setAttribute("data-t4-plots", String(plots.length));
	document.body.setAttribute("data-t4-ready", "1");
})();
