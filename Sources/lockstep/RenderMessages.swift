import Foundation
import LockstepControl
import LockstepFiles
import LockstepSchema
import LockstepSession

/// What `session render` does with the messages its MIDI and network cues sent: the MIDI ones
/// into a Standard MIDI File (`--midi-out`, one tick a sample), all of them in the JSON report
/// and the summary.
struct RenderMessages {
    /// The Standard MIDI File being written, made before the render (a folder that cannot take it
    /// fails at once), committed after.
    private let output: AtomicFileOutput?
    private let path: String?
    private let rate: Int

    /// Prepares `--midi-out` `path` (nil: none) for a render at `rate`.
    init(midiOut path: String?, rate: Double, output audio: String, inputs: [String]) throws {
        self.path = path
        self.rate = Int(rate)
        guard let path else {
            output = nil
            return
        }
        guard path != "-", !path.isEmpty else {
            throw CLIError(message: "session render: --midi-out takes a file to write (e.g. --midi-out show.mid), not standard output", exitCode: 64)
        }
        guard rate == rate.rounded(), StandardMIDIFile.sampleTiming(sampleRate: Int(rate)) != nil else {
            throw CLIError(message: "session render: --midi-out: no Standard MIDI File ticks exactly once a sample at \(rate) Hz; render at a rate such as 44100 or 48000 (--rate)", exitCode: 64)
        }
        do {
            try OutputSafety.refuseOverwritingInputs(output: path, inputs: inputs + [audio], option: "--midi-out")
            output = try AtomicFileOutput(destinationPath: path)
        } catch {
            throw CLIError(message: "session render: \(error.description)")
        }
    }

    /// Writes the MIDI messages into the file, if one was asked for.
    func finish(_ messages: [CueMessage]) throws {
        guard let output, let path else { return }
        let events: [(sample: Int64, bytes: [UInt8])] = messages.compactMap {
            guard case .midi(let message) = $0.payload else { return nil }
            return ($0.sampleTime, message.bytes)
        }
        do {
            try output.write(try StandardMIDIFile.bytes(of: events, sampleRate: rate, path: path))
            try output.commit()
        } catch let error as StandardMIDIFileError {
            output.abort()
            throw CLIError(message: "session render: --midi-out \(error.description)")
        } catch let error as FileError {
            output.abort()
            throw CLIError(message: "session render: --midi-out: \(error.description)")
        }
    }

    /// The messages as the JSON report gives them (nil: the session has no MIDI or network cue).
    static func reports(_ messages: [CueMessage], session: Session) -> [CueMessageReport]? {
        guard session.document.cues.contains(where: { $0.action.type == .midi || $0.action.type == .network }) else { return nil }
        return messages.map { message in
            switch message.payload {
            case .midi(let midi):
                return CueMessageReport(cue: message.cue, kind: "midi", position: message.position, sampleTime: message.sampleTime,
                                        bytes: midi.bytes.map { String(format: "%02X", $0) }.joined(separator: " "))
            case .network(let destination, let network):
                return CueMessageReport(cue: message.cue, kind: "network", position: message.position, sampleTime: message.sampleTime,
                                        destination: destination, message: network.description)
            }
        }
    }

    /// The summary's lines: how many MIDI messages went where, and each network message (the
    /// first 20).
    func lines(_ messages: [CueMessage]) -> [String] {
        var lines: [String] = []
        let midi = messages.filter { if case .midi = $0.payload { return true } else { return false } }
        if let path {
            lines.append("MIDI cues: \(midi.count) message\(midi.count == 1 ? "" : "s") written to \(path), each on its sample (one tick a sample)")
        } else if !midi.isEmpty {
            lines.append("MIDI cues: \(midi.count) message\(midi.count == 1 ? "" : "s") not written; --midi-out FILE.mid writes them on their samples")
        }
        let network = messages.filter { if case .network = $0.payload { return true } else { return false } }
        for message in network.prefix(20) {
            guard case .network(let destination, let osc) = message.payload else { continue }
            lines.append("network cue \(message.cue): \(osc) to \(destination) at \(Terminal.time(Double(message.sampleTime) / Double(rate))) (sample \(message.sampleTime))")
        }
        if network.count > 20 { lines.append("… and \(network.count - 20) more network messages (all of them with --json)") }
        return lines
    }
}
