import Foundation
import Lockstep
import LockstepJACK
import LockstepSession
import LockstepShow

/// The example's body, outside `main.swift` so that nothing in it is main-actor isolated.
enum LiveShowExample {
    static func run(arguments: [String]) -> Int32 {
        var arguments = arguments
        var server: String?
        if let index = arguments.firstIndex(of: "--server"), index + 1 < arguments.count {
            server = arguments[index + 1]
            arguments.removeSubrange(index...index + 1)
        }
        let take = arguments.first ?? "live-show-take.wav"
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Sessions").standardized.path
        do {
            // 1. The session, checked: every problem named with its line.
            let session = try Session.load(path: "\(folder)/stems.yaml")
            // 2. One JACK client; its master outputs go to the sound card.
            let device = try JACKDevice(options: .init(clientName: "live-show", serverName: server))
            // 3. The show: layers streamed ahead on their own threads, the mix recorded from the
            //    session's first sample.
            var options = LiveSession.Options()
            options.recordPath = take
            let show = try LiveSession(session: session, device: device, options: options)
            show.onNote = { note in print("note: \(note)") }
            try show.start()
            print("started at device sample \(show.startSampleTime ?? 0), \(Int(show.engine.sampleRate)) Hz")
            // 4. Step until the session has ended (a GO, a gain or a seek would go to show.player).
            var end: ShowEnd?
            while end == nil {
                end = try show.step(canStillCommand: false)
                usleep(5_000)
            }
            let position = show.fadeOut()
            let outcome = show.stop()
            device.stop()
            print("ended (\(end!)) at session sample \(position); discontinuities: \(show.engine.discontinuityCount)"
                  + (outcome.recording.map { "; recorded \($0.framesWritten) frames to \($0.path)" } ?? ""))
            if let error = outcome.error { print("error: \(error)"); return 1 }
            return 0
        } catch {
            print("LiveShow: \(error)")
            return 1
        }
    }
}
