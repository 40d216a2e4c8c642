// Types only: see include/CAudioQueueTypes.h.
