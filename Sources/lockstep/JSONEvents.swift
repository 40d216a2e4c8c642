@preconcurrency import Glibc   // C's stdout: a global the stream behind never changes
import Foundation
import Lockstep
import LockstepControl
import Synchronization

/// `--json-events`: live events as JSON Lines on standard output, one ``ControlUpdate`` (the
/// object OSC and the web page get) per line as it happens — layers and cues starting and ending
/// with their sample, discontinuities, rate changes. Standard output is flushed after each line.
/// The `--json` summary, when asked for too, is the last line.
final class JSONEvents: Sendable {
    /// Whether events are written (`--json-events` given).
    let enabled: Bool
    private let writing = Mutex(())

    /// Writes events only when `enabled`.
    init(enabled: Bool) { self.enabled = enabled }

    /// Writes `update` as one line. Any thread.
    func emit(_ update: ControlUpdate) {
        guard enabled else { return }
        let line = update.json + "\n"
        writing.withLock { _ in   // one line at a time, whole
            print(line, terminator: "")
            // Standard output only: fflush(NULL) also locks every input stream, and waits for
            // the --control reader's getline on standard input to return (it held the run's
            // loop until the next typed line arrived).
            fflush(stdout)
        }
    }

    /// Writes a `layer/started` or `layer/ended` line for a queue event of the layer playing
    /// `file` (other events write nothing). Any thread (queue event handlers run on the callback
    /// thread).
    func layer(_ file: String, _ event: QueueEvent) {
        switch event {
        case .started(let sampleTime): emit(ControlUpdate(.layerStarted, file: file, sampleTime: sampleTime))
        case .stopped(let sampleTime): emit(ControlUpdate(.layerEnded, file: file, sampleTime: sampleTime))
        default: break
        }
    }

    /// Writes a `discontinuity` line for each break `engine` logged since the last call.
    func discontinuities(of engine: Engine, seen count: inout Int) {
        guard enabled else { count = engine.discontinuityCount; return }
        guard engine.discontinuityCount > count else { return }
        let (recent, total) = engine.discontinuities(after: count)
        for gap in recent {
            emit(ControlUpdate(.discontinuity, sampleTime: gap.sampleTime,
                               discontinuity: DiscontinuityRecord(gap)))
        }
        count = total
    }

    /// Writes a `rate` line: the device's rate became `rate` at `sampleTime`.
    func rateChange(to rate: Int, at sampleTime: Int64) {
        emit(ControlUpdate(.rateChange, sampleTime: sampleTime, sampleRate: rate))
    }
}
