import CLo
import Foundation

/// One OSC message: an address and its arguments. Decoded and encoded by liblo
/// (`lo_message_deserialise`, `lo_message_serialise`); Lockstep never writes OSC bytes itself.
public struct OSCMessage: Sendable, Hashable {
    /// The address pattern, such as `/cue/bell/start`.
    public var address: String
    /// The arguments, in order.
    public var arguments: [OSCArgument]

    /// A message to encode.
    public init(_ address: String, _ arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// Whether a packet is an OSC bundle (`#bundle`) rather than a message.
    public static func isBundle(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.count >= 8 && packet.prefix(8).elementsEqual("#bundle\0".utf8)
    }

    /// The address of a packet, if it starts with a valid OSC string (for answering a packet that
    /// is too large or malformed). The corresponding C function is `lo_get_path`.
    public static func address(of packet: UnsafeRawBufferPointer) -> String? {
        guard let base = packet.baseAddress, packet.count >= 4,
              let path = lo_get_path(UnsafeMutableRawPointer(mutating: base), packet.count) else { return nil }
        let text = String(cString: path)
        return text.hasPrefix("/") ? text : nil
    }

    /// Decodes one OSC message (not a bundle).
    ///
    /// The corresponding C function is `lo_message_deserialise`, which checks every string's
    /// termination and padding and every argument's size against the packet.
    /// - Throws: ``OSCError`` (`.malformed`) saying what is wrong with the packet.
    public init(decoding packet: UnsafeRawBufferPointer) throws(OSCError) {
        guard let base = packet.baseAddress, !packet.isEmpty else {
            throw OSCError(.malformed, "the packet is empty; an OSC message starts with its address, such as /go")
        }
        var result: Int32 = 0
        guard let message = lo_message_deserialise(UnsafeMutableRawPointer(mutating: base), packet.count, &result) else {
            throw OSCError(.malformed, "not an OSC message: \(Self.problem(result)); send one message per datagram, with an address such as /go")
        }
        defer { lo_message_free(message) }
        let address = String(cString: lo_get_path(UnsafeMutableRawPointer(mutating: base), packet.count))
        guard address.hasPrefix("/") else {
            throw OSCError(.malformed, "the address '\(address)' does not start with '/'; OSC addresses look like /go")
        }
        let count = Int(lo_message_get_argc(message))
        let types = lo_message_get_types(message).map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
        let argv = lo_message_get_argv(message)
        var arguments: [OSCArgument] = []
        for index in 0..<min(count, types.count) {
            arguments.append(try OSCArgument(type: UInt8(bitPattern: types[index]), value: argv?[index]))
        }
        self.init(address, arguments)
    }

    /// The message as OSC bytes.
    ///
    /// The corresponding C functions are `lo_message_new`, `lo_message_add_*` and
    /// `lo_message_serialise`.
    /// - Throws: ``OSCError`` (`.encoding`) if liblo cannot build it (out of memory, a bad
    ///   argument).
    public func encoded() throws(OSCError) -> [UInt8] {
        let message = try makeLiblo()
        defer { lo_message_free(message) }
        var size = 0
        guard let bytes = lo_message_serialise(message, address, nil, &size) else {
            throw OSCError(.encoding, "liblo could not encode the message to \(address)")
        }
        defer { free(bytes) }
        return Array(UnsafeRawBufferPointer(start: bytes, count: size))
    }

    /// The message as a liblo message (the caller frees it with `lo_message_free`, or hands it
    /// to a bundle).
    func makeLiblo() throws(OSCError) -> lo_message {
        guard let message = lo_message_new() else { throw OSCError(.encoding, "liblo could not allocate a message") }
        for argument in arguments {
            guard argument.add(to: message) == 0 else {
                lo_message_free(message)
                throw OSCError(.encoding, "liblo could not add the argument \(argument) to \(address)")
            }
        }
        return message
    }

    /// liblo's result codes, in words.
    static func problem(_ code: Int32) -> String {
        switch code {
        case LO_EINVALIDPATH: return "the address is not a terminated, padded OSC string"
        case LO_ENOTYPE: return "the type tag string is missing"
        case LO_EINVALIDTYPE: return "the type tag string is not a terminated, padded OSC string"
        case LO_EBADTYPE: return "the type tag string does not start with ','"
        case LO_EINVALIDARG: return "an argument does not match its type tag or runs past the end"
        case LO_ESIZE: return "the arguments do not fill the packet exactly"
        case LO_EALLOC: return "liblo ran out of memory"
        case LO_EINVALIDBUND: return "it is not a bundle"
        default: return "liblo error \(code)"
        }
    }
}
