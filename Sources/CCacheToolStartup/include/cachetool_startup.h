#ifndef CACHETOOL_STARTUP_H
#define CACHETOOL_STARTUP_H

/* Nothing to call: linking this target into an executable runs its pre-initialiser (startup.c) before every library
   initialiser. The header exists because a C target needs one. */

#endif
