import Foundation
import LockstepSchema
import LockstepSession
import Synchronization

/// Sends the OSC messages of a session's network cues (`type: network`) as the session plays:
/// each ``step()`` sends those whose first sample the session has played since the last step
/// (a seek back, a reset or a GO firing one again sends it again), over UDP from a socket of its
/// own. Call it often (the run's loop does every few milliseconds): a message leaves within a
/// step of its sample's being played into the device.
public final class NetworkCueSender: Sendable {
    /// What one send did.
    public struct Sent: Sendable, Hashable {
        /// The network cue.
        public var cue: String
        /// The session sample it is placed on.
        public var position: Int64
        /// Where it went.
        public var destination: String
        /// The message.
        public var message: NetworkMessage
        /// Why it was not sent (the destination does not resolve, the network refused it); nil
        /// when it was.
        public var problem: String?
    }

    private struct State {
        var player: SessionPlayer
        /// The session position the last step saw: the samples before it have played.
        var reached: Int64
        /// The player's start the last step saw (``LockstepSession/SessionPlayer/currentStart``).
        var start: Int
        var peers: [String: Result<OSCPeer, OSCError>] = [:]
    }
    private let state: Mutex<State>
    private let sockets: (v4: OSCUDPSocket?, v6: OSCUDPSocket?)

    /// A sender for `player`'s network cues, from where the session is now.
    /// - Throws: ``OSCError`` when no UDP socket can be made.
    public init(player: SessionPlayer) throws(OSCError) {
        state = Mutex(State(player: player, reached: player.position, start: player.currentStart.count))
        sockets = (try? OSCUDPSocket(binding: OSCEndpoint(host: "0.0.0.0", port: 0)),
                   try? OSCUDPSocket(binding: OSCEndpoint(host: "::", port: 0)))
        guard sockets.v4 != nil || sockets.v6 != nil else {
            throw OSCError(.cannotBind, "network cues: cannot make a UDP socket to send from")
        }
    }

    /// Whether `session` has network cues (else no sender is needed).
    public static func isNeeded(for session: Session) -> Bool {
        session.document.cues.contains { $0.action.type == .network }
    }

    /// Sends from `player` from now on (the player made again after a rate change).
    public func replacePlayer(_ player: SessionPlayer) {
        state.withLock { state in
            state.player = player
            state.reached = player.position
            state.start = player.currentStart.count
        }
    }

    /// Sends every network cue whose first sample the session reached since the last step.
    /// - Returns: what was sent (or could not be), in time order.
    @discardableResult
    public func step() -> [Sent] {
        let due: [(SessionTimeline.Cue, String, NetworkMessage, OSCPeer?, String?)] = state.withLock { state in
            let position = state.player.position
            let timeline = state.player.timeline
            // A seek back or a reset: what lies ahead from where it started is sent (again).
            let start = state.player.currentStart
            if start.count != state.start {
                state.start = start.count
                state.reached = min(state.reached, start.position)
            }
            if position < state.reached { state.reached = position }
            defer { state.reached = position }
            var due: [(SessionTimeline.Cue, String, NetworkMessage, OSCPeer?, String?)] = []
            for cue in timeline.cues {
                guard case .network(let destination, let message) = cue.action, let start = cue.start,
                      state.reached <= start, start < position, cue.state(at: start) != .stopped else { continue }
                let peer = state.peers[destination] ?? Self.resolve(destination)
                state.peers[destination] = peer
                switch peer {
                case .success(let address): due.append((cue, destination, message, address, nil))
                case .failure(let error): due.append((cue, destination, message, nil, error.message))
                }
            }
            return due.sorted { ($0.0.start!, $0.0.index) < ($1.0.start!, $1.0.index) }
        }
        return due.map { cue, destination, message, peer, problem in
            var sent = Sent(cue: cue.name, position: cue.start!, destination: destination, message: message, problem: problem)
            if let peer {
                let socket = peer.family == Int32(AF_INET6) ? sockets.v6 : sockets.v4
                do throws(OSCError) {
                    let bytes = try OSCMessage(message.address, message.arguments.map(Self.argument)).encoded()
                    if socket?.send(bytes, to: peer) != true { sent.problem = "the network did not take it (no route, or the send buffer is full)" }
                } catch {
                    sent.problem = error.message
                }
            }
            return sent
        }
    }

    static func argument(_ argument: NetworkMessage.Argument) -> OSCArgument {
        switch argument {
        case .int(let value): return .int32(value)
        case .float(let value): return .float(value)
        case .string(let text): return .string(text)
        }
    }

    static func resolve(_ destination: String) -> Result<OSCPeer, OSCError> {
        do throws(OSCError) {
            return .success(try OSCPeer.resolve(OSCEndpoint.parse(destination, option: "destination")))
        } catch {
            return .failure(error)
        }
    }
}
