/* sysfs_testutil.h - where the checked-in sysfs fixture trees lie, for the
 * discovery, event, kind, PCI and DRM tests (paths relative to the
 * repository root, where `make check` runs the tests). */
#ifndef T4_SYSFS_TESTUTIL_H
#define T4_SYSFS_TESTUTIL_H

#define SYSFS_FIX "tests/fixtures/sysfs/"
#define SYSFS_T410 SYSFS_FIX "t410"

#endif
