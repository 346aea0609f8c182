/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libprofil internals: nothing here is exported. */
#ifndef _PROFIL_PRIVATE_H
#define _PROFIL_PRIVATE_H

#include <linux/profil.h>

#define PROFIL_DEVICE	"/dev/profil"

/* One ioctl on a fresh /dev/profil fd; -1 and errno on failure. */
int __profil_dev_ioctl(unsigned long cmd, void *arg);

#endif /* _PROFIL_PRIVATE_H */
