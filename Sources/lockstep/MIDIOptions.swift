import Foundation
import LockstepControl
import LockstepJACK
import Synchronization

/// The MIDI control surface's defaults, shared by `session run --midi` and
/// `session render --midi-file`.
enum MIDIDefaults {
    /// Samples from a MIDI event to the sample its commands land on in `session render
    /// --midi-file`: two periods of 256 frames, the least at which every command lands on its
    /// sample live at that period (`session run --midi-latency 512`).
    static let latency = 512
    /// The longest latency taken (10 s at 48 kHz).
    static let maximumLatency = 480_000
}

/// Where `--midi-latency` places a MIDI event's commands.
enum MIDIPlacement: Hashable {
    /// As soon as they come (the default live): a GO sounds from the next cycle.
    case next
    /// This many samples after the event, as `session render --midi-file` places them.
    case after(Int)
}

/// The MIDI surface of `session run --midi`: a thread of its own reads the device's MIDI input
/// as soon as the process thread wakes it and hands every event to the ``MIDIControl`` at once
/// (a GO must not wait for the run loop's next turn); replies go to the display.
final class MIDIReader: Sendable {
    let input: JACKMIDIInput
    let control: MIDIControl
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `input`; `log` gets each reply's summary (errors as `MIDI …: why`).
    init(input: JACKMIDIInput, device: JACKDevice, control: MIDIControl, log: @escaping @Sendable (String) -> Void) {
        self.input = input
        self.control = control
        let thread = Thread { [self] in
            // Realtime priority (under the process thread's): a command must be carried out in
            // the period its event arrived in to land two periods after it.
            device.promoteCurrentThread()
            while !stopping.load(ordering: .acquiring) {
                for event in input.read(timeout: 0.1) {
                    for reply in control.handle(event) {
                        log("MIDI \(reply.address.dropFirst(5)): \(reply.isOK ? "" : "refused: ")\(reply.summary)")
                    }
                }
            }
            done.signal()
        }
        thread.name = "lockstep-midi"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Stops the thread (waits for it, at most 1 s).
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        input.interruptRead()
        _ = done.wait(timeout: .now() + 1)
    }

    var summary: MIDIInputSummary {
        let counts = control.statistics
        let port = input.statistics
        return MIDIInputSummary(port: input.portName, latency: control.latency, received: counts.received, matched: counts.matched,
                       unmatched: counts.unmatched, broken: counts.broken, refused: counts.refused,
                       dropped: port.droppedRingFull + port.droppedOversized,
                       lastBroken: control.lastBrokenMessage)
    }
}
