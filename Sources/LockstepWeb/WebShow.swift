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
    /// The audio input ports a layer's own outputs may be connected to (a layer's `ports`).
    func audioDestinations() -> [String]
}

extension WebShow {
    /// None known.
    public func audioDestinations() -> [String] { [] }
}

/// A running session as a ``WebShow``: the dispatcher's player (the one playing now, after a
/// sample-rate change too).
public struct SessionWebShow: WebShow {
    /// Where commands go.
    public let dispatcher: ControlDispatcher

    /// The show of `dispatcher`'s session.
    /// Lists the audio input ports of the graph (nil: none known).
    public var destinations: (@Sendable () -> [String])?

    /// The show of `dispatcher`'s session; `destinations` lists the ports a layer may be routed to.
    public init(dispatcher: ControlDispatcher, destinations: (@Sendable () -> [String])? = nil) {
        self.dispatcher = dispatcher
        self.destinations = destinations
    }

    /// The audio input ports of the graph, from ``destinations``.
    public func audioDestinations() -> [String] { destinations?() ?? [] }

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
