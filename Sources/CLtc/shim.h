#ifndef LOCKSTEP_CLTC_SHIM_H
#define LOCKSTEP_CLTC_SHIM_H
#include <ltc.h>
#endif
