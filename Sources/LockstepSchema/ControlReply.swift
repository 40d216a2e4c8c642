/// The answer to one command: what was asked, whether it was done, and what came of it.
///
/// Encoded as QLab encodes its OSC replies: `{"address": …, "status": "ok" | "error", "data": …}`.
/// For an error, `data` is the message, which says what went wrong and what to do, and `code`
/// (Lockstep's own key) says which kind of error it is, for a client to switch on.
public struct ControlReply: Sendable, Hashable, Codable {
    /// Whether the command was carried out.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Done.
        case ok
        /// Not done; ``ControlReply/data`` says why.
        case error
    }

    /// The command as the surface named it: the OSC address (`/go`) or the typed verb (`go`).
    public var address: String
    /// Done or not.
    public var status: Status
    /// What came of it (the cue fired and its sample, the status…), or the error message.
    public var data: ControlValue?
    /// For an error, which kind it is; nil for success.
    public var code: ControlErrorCode?
    /// One line for a person: `go bell at 0:01.451 (sample 69632)`, or the error message. Not
    /// encoded.
    public var summary: String = ""

    private enum CodingKeys: String, CodingKey { case address, status, data, code }

    /// A reply that reports success.
    public static func ok(_ address: String, _ data: ControlValue?, summary: String) -> ControlReply {
        ControlReply(address: address, status: .ok, data: data, summary: summary)
    }

    /// A reply that reports success with `result` (a ``CommandResult``, a ``ControlStatus``) as
    /// its data, encoded as the schema writes it; an error reply if it cannot be encoded.
    public static func ok(_ address: String, encoding result: some Encodable, summary: String) -> ControlReply {
        guard let data = try? ControlValue(encoding: result) else {
            return .error(address, .failed, "\(address): the answer could not be encoded as JSON")
        }
        return ControlReply(address: address, status: .ok, data: data, summary: summary)
    }

    /// The data decoded as one of the schema's types (``CommandResult``, ``ControlStatus``).
    /// - Throws: `DecodingError` when the data is not `type`'s JSON.
    public func decodeData<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONSchema.decode(type, from: (data ?? .null).json)
    }

    /// A reply that reports an error of kind `code` with its message.
    public static func error(_ address: String, _ code: ControlErrorCode, _ message: String) -> ControlReply {
        ControlReply(address: address, status: .error, data: .string(message), code: code, summary: message)
    }

    /// Whether the command was carried out.
    public var isOK: Bool { status == .ok }

    /// The reply as one line of JSON.
    public var json: String {
        var members: [String: ControlValue] = ["address": .string(address), "status": .string(status.rawValue)]
        if let data { members["data"] = data }
        if let code { members["code"] = .string(code.rawValue) }
        return ControlValue.object(members).json
    }
}

/// Which kind of error a command met: the `code` of an error reply, stable for clients to switch
/// on (the message beside it is for people and may be reworded).
public enum ControlErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The command could not be read: a malformed line, JSON object, OSC packet or bundle, wrong
    /// or missing arguments, a packet over the size limit.
    case malformed
    /// No such command or OSC address.
    case unknownCommand
    /// No cue has that name, number or unique ID.
    case unknownCue
    /// No layer has that name.
    case unknownLayer
    /// The cue is not a manual cue (it has a place on the timeline, or starts with another).
    case notManual
    /// Nothing at the playhead (past the last manual cue), or nothing to select in that direction.
    case nothingWaiting
    /// A GO came inside the double-GO window after the previous one and was ignored.
    case doubleGo
    /// The session or the cue is not in the state the command needs (pausing what does not
    /// play, resuming what is not paused, a time tag while nothing plays).
    case wrongState
    /// The command moves the whole session's clock and cannot be placed on a sample.
    case cannotSchedule
    /// A value outside its range: a gain, a ramp, a time, a port, a time tag too far ahead.
    case outOfRange
    /// An edit of a cue that would make the session invalid; the message says why, as
    /// `session check` would.
    case invalidEdit
    /// Lockstep does not have or cannot change that (a selection, a setting, a read-only property).
    case unsupported
    /// The show needs a passcode first, or the passcode was wrong.
    case unauthorized
    /// The sender sent more than the limit allows; the message was dropped.
    case tooManyMessages
    /// Carrying the command out failed (the queues could not restart, the answer could not be
    /// encoded).
    case failed
}
