// LiveShow: a session played live through JACK by the library alone — what `lockstep session run`
// does, without the CLI.
//
// Plays Examples/Sessions/stems.yaml through one JACK client (connected to the sound card's
// playback ports), records the master mix, prints every note (late starts, rate changes, the
// server going away) and a summary, and ends when the session has ended.
//
//   swift run LiveShow [--server NAME] [TAKE.wav]
import Foundation

exit(LiveShowExample.run(arguments: Array(CommandLine.arguments.dropFirst())))
