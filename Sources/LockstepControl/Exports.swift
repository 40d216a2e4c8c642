// The JSON types (ControlReply, ControlUpdate, ControlStatus, ControlValue…) live in
// LockstepSchema so that every output shares them; importing LockstepControl brings them along.
@_exported import LockstepSchema
