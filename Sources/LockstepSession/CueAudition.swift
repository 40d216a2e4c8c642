import Foundation
import Lockstep
import LockstepFiles
import Synchronization

/// Plays cues on outputs of their own, apart from the show (QLab's audition): the cue's audio —
/// its region, loops, gain (its layer's and its own) and channel map — on an output queue that is
/// not summed into the master and has its own JACK ports (`audition_1`…), which ``connect``
/// routes (to headphones, a monitor). The show's timeline, playhead and outputs are untouched; an
/// offline render never hears an audition. One cue auditions at a time: a new one replaces it.
///
/// ```swift
/// let audition = CueAudition(channels: 2) { ports in try device.connect(ports[0], to: "system:playback_3") }
/// let started = try audition.play("bell", of: player)
/// ```
public final class CueAudition: Sendable {
    /// The channels of the audition outputs (the session's).
    public let channels: Int
    /// Called with the new outputs' port names each time an audition creates them, to connect
    /// them; an error stops the audition and is its answer.
    public let connect: @Sendable ([String]) throws -> Void
    private let current = Mutex<(player: FilePlayer, cue: String)?>(nil)

    /// The cue being auditioned (nil: none, or it has played to its end).
    public var cue: String? { current.withLock { $0.flatMap { $0.player.queue.isRunning ? $0.cue : nil } } }

    /// What an audition started.
    public struct Started: Sendable, Hashable {
        /// The cue auditioned.
        public var cue: String
        /// Its outputs' port names.
        public var outputs: [String]
        /// Frames (at the device's rate) it plays; nil when it loops forever.
        public var frames: Int64?
    }

    /// An audition of `channels` channels whose outputs `connect` routes.
    public init(channels: Int, connect: @escaping @Sendable ([String]) throws -> Void) {
        self.channels = channels
        self.connect = connect
    }

    /// The queue name of the audition (its ports are `audition_1`…).
    public static let queueName = "audition"

    /// Auditions cue `name` of `player`'s session (as edited), replacing any audition playing:
    /// it starts as soon as the device can start it.
    /// - Throws: ``PlayerError`` for an unknown cue, a cue that plays no file (an action or group
    ///   cue), or a file or device that fails.
    @discardableResult
    public func play(_ name: String, of player: SessionPlayer) throws(PlayerError) -> Started {
        let timeline = player.timeline
        guard let cue = timeline.cues.first(where: { $0.name == name }) else {
            throw PlayerError(.unknownCue, "audition: unknown cue '\(name)'\(Suggest.hint(for: name, in: timeline.cues.map(\.name)))")
        }
        guard cue.isAudio else {
            throw PlayerError(.wrongState, "audition: cue '\(name)' is a \(player.document.cues[cue.index].action.type.rawValue) cue and plays no file; audition an audio cue")
        }
        stop()
        let map = player.document.cues[cue.index].channelMap
            ?? player.document.layers.first { $0.name == timeline.layers[cue.layer].name }?.channelMap
        let routing: FilePlayer.ChannelRouting = map.map { .map($0, outputs: channels) } ?? .downmix(to: channels)
        do {
            let audition = try FilePlayer(path: cue.path, engine: player.engine, name: Self.queueName,
                                          startFrame: cue.regionStart, endFrame: cue.regionEnd,
                                          playCount: cue.playCount.map { .times($0) } ?? .forever,
                                          streamer: player.streamer, channels: routing)
            let outputs = try audition.queue.enableDirectOutputs()
            audition.queue.mixesIntoMaster = false
            let gain = SessionGain.linear(timeline.layers[cue.layer].gainDB + cue.gainDB)
            try audition.queue.setParameter(.volume, to: Float(gain))
            try audition.prepare()
            do { try connect(outputs) } catch {
                try? audition.queue.dispose()
                throw PlayerError(.failed, "audition: cannot connect its outputs: \(error)")
            }
            try audition.queue.start()
            current.withLock { $0 = (audition, name) }
            let frames = audition.totalFrames.map { Int64((Double($0) * player.rate / cue.fileRate).rounded()) }
            return Started(cue: name, outputs: outputs, frames: frames)
        } catch let error as PlayerError {
            throw error
        } catch {
            throw PlayerError(.failed, "audition of '\(name)': \(error)")
        }
    }

    /// Stops the audition playing, if any (at once), and frees its outputs.
    /// - Returns: whether one was playing.
    @discardableResult
    public func stop() -> Bool {
        guard let playing = current.withLock({ state -> FilePlayer? in defer { state = nil }; return state?.player }) else { return false }
        playing.stop()
        try? playing.queue.dispose()
        return true
    }
}
