/// The answer to one command: what was asked, whether it was done, and what came of it.
///
/// Encoded as QLab encodes its OSC replies: `{"address": …, "status": "ok" | "error", "data": …}`.
/// For an error, `data` is the message, which says what went wrong and what to do.
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
    /// One line for a person: `go bell at 0:01.451 (sample 69632)`, or the error message. Not
    /// encoded.
    public var summary: String = ""

    private enum CodingKeys: String, CodingKey { case address, status, data }

    /// A reply that reports success.
    public static func ok(_ address: String, _ data: ControlValue?, summary: String) -> ControlReply {
        ControlReply(address: address, status: .ok, data: data, summary: summary)
    }

    /// A reply that reports success with `result` (a ``CommandResult``, a ``ControlStatus``) as
    /// its data, encoded as the schema writes it; an error reply if it cannot be encoded.
    public static func ok(_ address: String, encoding result: some Encodable, summary: String) -> ControlReply {
        guard let data = try? ControlValue(encoding: result) else {
            return .error(address, "\(address): the answer could not be encoded as JSON")
        }
        return ControlReply(address: address, status: .ok, data: data, summary: summary)
    }

    /// The data decoded as one of the schema's types (``CommandResult``, ``ControlStatus``).
    /// - Throws: `DecodingError` when the data is not `type`'s JSON.
    public func decodeData<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONSchema.decode(type, from: (data ?? .null).json)
    }

    /// A reply that reports an error with its message.
    public static func error(_ address: String, _ message: String) -> ControlReply {
        ControlReply(address: address, status: .error, data: .string(message), summary: message)
    }

    /// Whether the command was carried out.
    public var isOK: Bool { status == .ok }

    /// The reply as one line of JSON.
    public var json: String { ControlJSON.line(self) }
}
