/// One MIDI message and the device sample time it happened on: what a MIDI input (a JACK MIDI
/// port, a Standard MIDI File read for an offline render) hands to whoever maps MIDI to commands.
public struct MIDIEvent: Sendable, Hashable {
    /// The device sample time of the message: for JACK MIDI, the start of the cycle it arrived in
    /// plus its frame offset in that cycle.
    public var sampleTime: Int64
    /// The message's bytes as sent, status byte first (a SysEx message from `F0` to `F7`).
    public var bytes: [UInt8]

    /// Creates an event.
    public init(sampleTime: Int64, bytes: [UInt8]) {
        self.sampleTime = sampleTime
        self.bytes = bytes
    }
}
