#ifndef LOCKSTEP_CLO_SHIM_H
#define LOCKSTEP_CLO_SHIM_H
#include <lo/lo.h>
#endif
