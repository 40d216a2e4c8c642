import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// What the chase tests share: a session of four cues placed on timecode (`at: tc`), each a ramp
/// that says which of its samples plays; the timecode's script (pieces of session timecode played
/// one after another: a start before the session's, a jump back, a jump forward, a stop and a
/// restart); `lockstep session run --chase` run against it; and the check of the capture.
struct ChaseRig {
    /// The pieces played, in frames of session timecode at 25 fps (01:00:00:00 = frame 0); nil:
    /// ``silentFrames`` frames of no timecode.
    /// Each cue has 25 frames of timecode before it after a jump (50 at the first start, 38 after
    /// the loss) and 10 after it.
    static let pieces: [(from: Int, to: Int)?] = [(-25, 95), (0, 95), (155, 215), nil, (227, 300)]
    static let silentFrames = 37
    /// Samples a frame (48 kHz, 25 fps).
    static let frameLength = 1920
    /// The cues: name, label, first frame of session timecode, ramp start.
    static let cues: [(name: String, label: String, frame: Int, ramp: Int)] = [
        ("a", "01:00:01:00", 25, 1), ("b", "01:00:02:10", 60, 100_000),
        ("c", "01:00:07:05", 180, 200_000), ("d", "01:00:10:15", 265, 300_000),
    ]
    static let step: Float = 1.0 / 65536
    /// `--chase-offset`, in samples.
    static let offset: Int64 = 960

    let temp: TemporaryTestDirectory

    /// Writes the session.
    init(prefix: String) throws {
        temp = try TemporaryTestDirectory(prefix: prefix)
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        var yaml = "channels: 1\ntimecode: { fps: 25, start: \"01:00:00:00\" }\ncues:\n"
        for cue in Self.cues {
            try FileFixtures.writeWAV(path: temp.file("\(cue.name).wav"), samples: Signals.ramp(frames: 48000, start: cue.ramp, step: Self.step), format: format)
            yaml += "  - { name: \(cue.name), file: \(cue.name).wav, at: tc \(cue.label) }\n"
        }
        try FileFixtures.writeText(path: temp.file("show.yaml"), yaml)
    }

    /// For each sample of the script (from its first), the session timecode sample (nil: silence).
    static var scriptPositions: [Int64?] {
        var positions: [Int64?] = []
        for piece in pieces {
            guard let piece else {
                positions += [Int64?](repeating: nil, count: silentFrames * frameLength)
                continue
            }
            positions += (piece.from * frameLength..<piece.to * frameLength).map { Int64($0) }
        }
        return positions
    }

    /// Runs `session run --chase SOURCE` into a capture, calls `play` once it waits for timecode
    /// (it returns the JACK frame time of the script's first sample), waits for `isDone`, then
    /// interrupts it; checks the capture and the chase events, and sets `xrun` first.
    func run(server: JACKServer, capture: JACKCapture, chase: String, counting: Bool, xrun: XrunFlag, xruns: () -> Int,
             play: () throws -> UInt32?, isDone: @escaping () -> Bool) throws {
        let running = try CLI.spawn(["session", "run", temp.file("show.yaml"), "--server", server.name, "--client-name", "chaser",
                                     "--connect", capture.portNames[0], "--chase", chase,
                                     "--chase-offset", "\(Self.offset) samples", "--json-events"])
        defer { if running.isRunning { running.send(SIGKILL) } }
        #expect(running.waitForErrorOutput(containing: "waiting for timecode", timeout: 20), "\(running.errorOutputSoFar)")
        let started = try play()
        #expect(capture.wait(timeout: 60) { isDone() })
        #expect(capture.waitForFrames(capture.frames + 24000, timeout: 5))
        running.send(SIGINT)
        let result = running.wait(timeout: 20)
        capture.stop()
        xrun.set(capture.xrunCount > 0 || xruns() > 0 || capture.clockJumps > 0
                 || result.stdout.contains("\"kind\":\"xrun\"") || result.stdout.contains("\"kind\":\"clockJump\""))
        #expect(result.status == 130, "\(result.stderr)")
        let firstTime = try #require(started)
        // What the run said of late starts and breaks, and its chase events, for a failure's message.
        let said = result.stderr.split(separator: "\n").filter { $0.contains("late") || $0.contains("chase:") || $0.contains("xrun") }
        check(master: capture.channel(0), capture: capture, firstTime: firstTime, counting: counting,
              said: said.joined(separator: " | ") + "; capture: \(capture.clockJumps) frame-clock jumps, \(capture.droppedFrames) frames dropped")
        let events = result.stdout.split(separator: "\n").filter { $0.contains("\"kind\":\"chase\"") }
        for state in ["lock", "jump", "relocate", "loss", "stop"] {
            #expect(events.contains { $0.contains("\"state\":\"\(state)\"") && $0.contains("\"sampleTime\":") }, "no \(state) event: \(events)")
        }
        #expect(events.filter { $0.contains("\"state\":\"relocate\"") }.count == 4, "\(events)")
        #expect(events.filter { $0.contains("\"state\":\"jump\"") }.count == 2, "\(events)")
    }

    /// Every non-silent captured sample is a cue's sample n; it must play where the script's
    /// timecode sample plus the offset is that cue's session sample, and each cue must start
    /// (n = 0) there in the script's order. With `counting`, the script's sample k is the one
    /// captured k frames after the capture's frame at `firstTime` (frames rendered, as a tape
    /// and lockstep count them); else at frame time `firstTime` + k (a sender that places each
    /// message on its frame time).
    func check(master: [Float], capture: JACKCapture, firstTime: UInt32, counting: Bool, said: String = "") {
        let positions = Self.scriptPositions
        let firstIndex = capture.recordedIndex(atFrameTime: Int64(firstTime))
        #expect(!counting || firstIndex != nil, "the capture holds no frame at the script's first frame time")
        var starts: [String] = [], misplaced: [String] = []
        var checked = 0
        // Runs of misplaced samples: (first capture index, count, session − expected).
        var runs: [(index: Int, count: Int, off: Int64?)] = []
        for (index, value) in master.enumerated() where value != 0 {
            let count = Int(value / Self.step)
            guard let cue = Self.cues.last(where: { $0.ramp <= count }) else { misplaced.append("\(index): \(value)"); continue }
            let n = count - cue.ramp
            let session = Int64(cue.frame * Self.frameLength + n)
            let k = counting ? index - (firstIndex ?? 0) : Int(Int32(bitPattern: capture.frameTime(ofRecordedFrame: index) &- firstTime))
            let expected = k >= 0 && k < positions.count ? positions[k].map { $0 + Self.offset } : nil
            if n == 0 { starts.append("\(cue.name)@\(expected.map(String.init) ?? "-")") }
            checked += 1
            guard expected != session else { continue }
            let off = expected.map { session - $0 }
            if let last = runs.last, last.index + last.count == index, last.off == off {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((index, 1, off))
            }
            if misplaced.count < 3 {
                misplaced.append("capture \(index): cue \(cue.name) sample \(n) (session \(session)), timecode + offset says \(expected.map(String.init) ?? "silence")")
            }
        }
        let want = ["a", "b", "a", "b", "c", "d"].map { name in "\(name)@\(Int64(Self.cues.first { $0.name == name }!.frame * Self.frameLength))" }
        #expect(starts == want, "cue starts (name@session sample timecode + offset gave there): \(starts)")
        let summary = runs.prefix(8).map { "\($0.count) from capture \($0.index) (cycle \(capture.cycleIndex(containing: $0.index))) off by \($0.off.map(String.init) ?? "silence")" }
        #expect(misplaced.isEmpty && checked >= 6 * 48000 - 10, "\(checked) samples checked; misplaced: \(misplaced); runs: \(runs.count): \(summary); the run said: \(said)")
    }
}
