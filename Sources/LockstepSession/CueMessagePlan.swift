/// A message a MIDI cue (`type: midi`) or a network cue (`type: network`) sends, placed on the
/// device sample its session sample plays on: what `session run` sends live and what
/// `session render` writes, planned by the same ``SessionPlayer/Schedule/cueMessages(from:until:midi:network:generation:)``.
public struct CueMessage: Sendable, Hashable {
    /// What is sent.
    public enum Payload: Sendable, Hashable {
        /// A MIDI cue's message.
        case midi(MIDICueMessage)
        /// A network cue's OSC message to `destination` (`HOST:PORT` as written).
        case network(destination: String, message: NetworkMessage)
    }

    /// Names this sending of the cue: the same cue sent again (after a seek back, a reset or a
    /// re-fire) has another key; the same one planned again (after an unrelated change) the same.
    public var key: Int64
    /// The cue.
    public var cue: String
    /// The session sample the cue is placed on.
    public var position: Int64
    /// The device sample it goes out on (in a render: the output sample).
    public var sampleTime: Int64
    /// What is sent.
    public var payload: Payload
}

extension SessionPlayer.Schedule {
    /// The messages of the MIDI cues (`midi`) and network cues (`network`) whose session sample
    /// plays on a device sample in `from..<until`, in time order (ties in cue order): none while
    /// the layers do not play; a cue placed before this start's origin, or stopped before its
    /// sample, sends nothing. `generation` tells apart the players of one run (one made again
    /// after a rate change) in the keys.
    public func cueMessages(from: Int64, until: Int64, midi: Bool, network: Bool, generation: Int = 0) -> [CueMessage] {
        guard isPlaying, from < until else { return [] }
        var due: [(cue: SessionTimeline.Cue, message: CueMessage)] = []
        for cue in timeline.cues {
            let payload: CueMessage.Payload
            switch cue.action {
            case .midi(let message) where midi: payload = .midi(message)
            case .network(let destination, let message) where network: payload = .network(destination: destination, message: message)
            default: continue
            }
            guard let position = cue.start, position >= originPosition, cue.state(at: position) != .stopped else { continue }
            let time = deviceTime(forPosition: position)
            guard time >= from && time < until else { continue }
            var hasher = Hasher()
            hasher.combine(generation)
            hasher.combine(start)
            hasher.combine(cue.index)
            hasher.combine(cue.instance)
            hasher.combine(position)
            due.append((cue, CueMessage(key: Int64(hasher.finalize()), cue: cue.name, position: position, sampleTime: time, payload: payload)))
        }
        return due.sorted { ($0.message.sampleTime, $0.cue.index) < ($1.message.sampleTime, $1.cue.index) }.map(\.message)
    }
}
