import Foundation
import LockstepSchema
import LockstepSession
import Synchronization

/// Sends the OSC messages of a session's network cues (`type: network`) as the session plays:
/// each ``step()`` sends those whose first sample the session has played since the last step
/// (a seek back, a reset or a GO firing one again sends it again; a cue loaded to a time past
/// its network cues does not send them), over UDP from a socket of its own — bound to the
/// loopback address for a destination on this machine. Call it often (the run's loop does every few milliseconds): a message leaves within a
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
        /// Each destination as written → its host and address (or why it has none).
        var peers: [String: Result<(host: String, peer: OSCPeer), OSCError>] = [:]
    }
    private let state: Mutex<State>
    /// The sockets sent from, by the address each is bound to: the loopback one for a
    /// destination on this machine, any address only for one the session names elsewhere.
    private let sockets = Mutex<[String: OSCUDPSocket]>([:])

    /// The run's overrides: a destination whose kind of network output is switched off gets nothing.
    public let overrides: ShowOverrides

    /// A sender for `player`'s network cues, from where the session is now, as `overrides` allow.
    public init(player: SessionPlayer, overrides: ShowOverrides = ShowOverrides()) {
        state = Mutex(State(player: player, reached: player.position, start: player.currentStart.count))
        self.overrides = overrides
    }

    /// The socket to send to `peer` (`destination` as written) from, made once.
    private func socket(for peer: OSCPeer, host: String) throws(OSCError) -> OSCUDPSocket {
        let v6 = peer.family == Int32(AF_INET6)
        let bind = Self.isLocal(host) ? (v6 ? "::1" : "127.0.0.1") : (v6 ? "::" : "0.0.0.0")
        if let made = sockets.withLock({ $0[bind] }) { return made }
        let made = try OSCUDPSocket(binding: OSCEndpoint(host: bind, port: 0))
        sockets.withLock { $0[bind] = made }
        return made
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
        let due: [(SessionTimeline.Cue, String, NetworkMessage, (host: String, peer: OSCPeer)?, String?)] = state.withLock { state in
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
            var due: [(SessionTimeline.Cue, String, NetworkMessage, (host: String, peer: OSCPeer)?, String?)] = []
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
        return due.map { cue, destination, message, address, problem in
            var sent = Sent(cue: cue.name, position: cue.start!, destination: destination, message: message, problem: problem)
            let local = address.map { Self.isLocal($0.host) } ?? true
            if address != nil, !overrides.allowsNetworkOutput(local: local) {
                let key: ShowOverrides.Key = !overrides.isEnabled(.oscOutputEnabled) ? .oscOutputEnabled
                    : local ? .networkLocalOutputEnabled : .networkExternalOutputEnabled
                sent.problem = "the override \(key.rawValue) is off (\(key.offMeans))"
            } else if let (host, peer) = address {
                do throws(OSCError) {
                    let bytes = try OSCMessage(message.address, message.arguments.map(Self.argument)).encoded()
                    if !(try socket(for: peer, host: host)).send(bytes, to: peer) {
                        sent.problem = "the network did not take it (no route, or the send buffer is full)"
                    }
                } catch {
                    sent.problem = error.message
                }
            }
            return sent
        }
    }

    /// Whether a destination's host (as written) is this machine: sent from the loopback socket,
    /// and governed by `networkLocalOutputEnabled`.
    static func isLocal(_ host: String) -> Bool { host == "localhost" || host.hasPrefix("127.") || host == "::1" }

    static func argument(_ argument: NetworkMessage.Argument) -> OSCArgument {
        switch argument {
        case .int(let value): return .int32(value)
        case .float(let value): return .float(value)
        case .string(let text): return .string(text)
        }
    }

    static func resolve(_ destination: String) -> Result<(host: String, peer: OSCPeer), OSCError> {
        do throws(OSCError) {
            let endpoint = try OSCEndpoint.parse(destination, option: "destination")
            return .success((endpoint.host, try OSCPeer.resolve(endpoint)))
        } catch {
            return .failure(error)
        }
    }
}
