import LockstepControl
import LockstepSession

/// What the web server shows and drives: the one control path, and the state the terminal
/// display reads (meters, the timeline), read off the realtime thread.
public protocol WebShow: Sendable {
    /// Where commands go, and whose updates are pushed.
    var dispatcher: ControlDispatcher { get }
    /// The meters now.
    func meters() -> WebMeters
    /// The timeline now, as a picture.
    func picture() -> TimelinePicture
    /// The discontinuities so far.
    func discontinuities() -> WebDiscontinuities
    /// The cue list's numbers and lengths.
    func cueList() -> WebCueList
}

/// A running session as a ``WebShow``: the dispatcher's player (the one playing now, after a
/// sample-rate change too).
public struct SessionWebShow: WebShow {
    /// Where commands go.
    public let dispatcher: ControlDispatcher

    /// The show of `dispatcher`'s session.
    public init(dispatcher: ControlDispatcher) { self.dispatcher = dispatcher }

    /// The meters of the player playing now.
    public func meters() -> WebMeters { WebMeters(player: dispatcher.player) }

    /// The timeline with the playhead where the session is, the selected cue highlighted.
    public func picture() -> TimelinePicture {
        let player = dispatcher.player
        return TimelinePicture(timeline: player.timeline, playhead: player.position, selected: player.playhead)
    }

    /// The engine's discontinuities.
    public func discontinuities() -> WebDiscontinuities { WebDiscontinuities(engine: dispatcher.player.engine) }

    /// The session's cues.
    public func cueList() -> WebCueList { WebCueList(player: dispatcher.player) }
}
