// The functions of this module are static inline in include/crealtime.h; SwiftPM needs a source file.
#include "crealtime.h"
