/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <pcsample.h>: Solaris's pcsample(2), served by profil.ko (libprofil).
 * See pcsample(2).
 */
#ifndef _PROFIL_PCSAMPLE_H
#define _PROFIL_PCSAMPLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

long pcsample(uintptr_t *samples, long nsamples);

#ifdef __cplusplus
}
#endif

#endif /* _PROFIL_PCSAMPLE_H */
