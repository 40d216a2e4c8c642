#ifndef LOCKSTEP_CSOXR_SHIM_H
#define LOCKSTEP_CSOXR_SHIM_H
#include <soxr.h>
#endif
