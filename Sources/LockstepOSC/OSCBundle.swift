import CLo
import Foundation
import Synchronization

/// An OSC bundle, decoded: its time tag and every message it holds, nested bundles flattened in
/// order, each message with the time tag of the bundle that holds it directly.
///
/// Decoded by liblo: `lo_server_dispatch_data` checks the bundle's element sizes
/// (`lo_validate_bundle`), decodes each message with `lo_message_deserialise` and recurses into
/// nested bundles; Lockstep reads what it hands over and never parses OSC bytes itself.
/// (liblo 0.31 has no `lo_bundle_deserialise`; its server's dispatcher is the bundle decoder it
/// has, used here on a private socket that is never read and has no name in the file system.)
public struct OSCBundle: Sendable, Hashable {
    /// One message of a bundle, with the time tag it is due at.
    public struct Entry: Sendable, Hashable {
        /// The time tag of the bundle that holds the message directly.
        public var timeTag: OSCTimeTag
        /// The message.
        public var message: OSCMessage

        /// An entry.
        public init(timeTag: OSCTimeTag, message: OSCMessage) {
            self.timeTag = timeTag
            self.message = message
        }
    }

    /// The time tag of the outermost bundle.
    public var timeTag: OSCTimeTag
    /// Every message, in the order they come in the packet.
    public var entries: [Entry]
    /// How deep bundles nest (1: no bundle inside this one).
    public var depth: Int

    /// The most messages a bundle may hold, all nested bundles together.
    public static let maximumMessages = 64
    /// The deepest nesting accepted.
    public static let maximumDepth = 8

    /// Decodes an OSC bundle (a packet starting with `#bundle`).
    /// - Throws: ``OSCError`` (`.malformed`) when liblo finds the bundle or one of its messages
    ///   malformed, when it nests deeper than ``maximumDepth`` or holds more than
    ///   ``maximumMessages`` messages; nothing of a malformed bundle is to be carried out.
    public init(decoding packet: UnsafeRawBufferPointer) throws(OSCError) {
        guard OSCMessage.isBundle(packet) else {
            throw OSCError(.malformed, "not an OSC bundle: a bundle starts with #bundle")
        }
        let result = OSCBundleDecoder.shared.withLock { decoder in decoder.decode(packet) }
        switch result {
        case .success(let bundle): self = bundle
        case .failure(let error): throw error
        }
    }

    /// Makes a bundle to encode.
    public init(timeTag: OSCTimeTag, entries: [Entry], depth: Int = 1) {
        self.timeTag = timeTag
        self.entries = entries
        self.depth = depth
    }
}

/// Something to send: one message, or a bundle of messages and bundles with a time tag.
public indirect enum OSCPacket: Sendable, Hashable {
    /// One message.
    case message(OSCMessage)
    /// A bundle: its time tag and contents, in order.
    case bundle(OSCTimeTag, [OSCPacket])

    /// The packet as OSC bytes.
    ///
    /// The corresponding C functions are `lo_bundle_new`, `lo_bundle_add_message`,
    /// `lo_bundle_add_bundle` and `lo_bundle_serialise` (and `lo_message_serialise` for a
    /// message).
    /// - Throws: ``OSCError`` (`.encoding`) when liblo cannot build it.
    public func encoded() throws(OSCError) -> [UInt8] {
        switch self {
        case .message(let message):
            return try message.encoded()
        case .bundle:
            let bundle = try makeBundle()
            defer { lo_bundle_free_recursive(bundle) }
            var size = 0
            guard let bytes = lo_bundle_serialise(bundle, nil, &size) else {
                throw OSCError(.encoding, "liblo could not encode the bundle")
            }
            defer { free(bytes) }
            return Array(UnsafeRawBufferPointer(start: bytes, count: size))
        }
    }

    /// A liblo bundle of this packet (which must be a bundle); the caller frees it with
    /// `lo_bundle_free_recursive`.
    private func makeBundle() throws(OSCError) -> lo_bundle {
        guard case .bundle(let tag, let contents) = self else { preconditionFailure("makeBundle() of a message") }
        guard let bundle = lo_bundle_new(lo_timetag(sec: UInt32(tag.rawValue >> 32), frac: UInt32(truncatingIfNeeded: tag.rawValue))) else {
            throw OSCError(.encoding, "liblo could not allocate a bundle")
        }
        for element in contents {
            switch element {
            case .message(let message):
                guard let made = try? message.makeLiblo() else {
                    lo_bundle_free_recursive(bundle)
                    throw OSCError(.encoding, "liblo could not build the message to \(message.address)")
                }
                guard lo_bundle_add_message(bundle, message.address, made) == 0 else {
                    lo_message_free(made)
                    lo_bundle_free_recursive(bundle)
                    throw OSCError(.encoding, "liblo could not add the message to \(message.address) to a bundle")
                }
            case .bundle:
                let child: lo_bundle
                do { child = try element.makeBundle() } catch {
                    lo_bundle_free_recursive(bundle)
                    throw error
                }
                guard lo_bundle_add_bundle(bundle, child) == 0 else {
                    lo_bundle_free_recursive(child)
                    lo_bundle_free_recursive(bundle)
                    throw OSCError(.encoding, "liblo could not nest a bundle")
                }
            }
        }
        return bundle
    }
}

/// liblo's bundle decoder: a liblo server whose dispatcher collects what it decodes instead of
/// calling methods, with its queue off (every message is handed over at once, whatever its time
/// tag). One per process, used under a lock (a liblo server is not thread-safe).
final class OSCBundleDecoder: @unchecked Sendable {
    /// The decoder, made on first use (nil if liblo could not make its server: every bundle then
    /// gets an error).
    static let shared = Mutex<OSCBundleDecoder>(OSCBundleDecoder())

    private let server: lo_server?
    private let creationProblem: String?
    /// What the current decode collected.
    private var entries: [OSCBundle.Entry] = []
    private var depth = 0
    private var deepest = 0
    private var problem: String?
    private var outerTag = OSCTimeTag.immediately

    private init() {
        // A Unix datagram socket in a private folder, removed at once: liblo's server needs a
        // socket, and nothing can reach this one.
        var template = Array((NSTemporaryDirectory() + "/lockstep-osc-XXXXXX").utf8CString)
        guard let folder = mkdtemp(&template).map({ String(cString: $0) }) else {
            server = nil
            creationProblem = "cannot make a private folder for liblo's bundle decoder: \(String(cString: strerror(errno)))"
            return
        }
        let path = folder + "/decoder"
        server = lo_server_new_with_proto(path, LO_UNIX) { code, message, _ in
            // liblo reports a problem met anywhere in the bundle here (with the context set below).
            guard let context = lo_error_get_context() else { return }
            let decoder = Unmanaged<OSCBundleDecoder>.fromOpaque(context).takeUnretainedValue()
            if decoder.problem == nil {
                decoder.problem = OSCMessage.problem(code) + (message.map { " (liblo: \(String(cString: $0)))" } ?? "")
            }
        }
        unlink(path)
        rmdir(folder)
        guard let server else {
            creationProblem = "liblo could not make its bundle decoder"
            return
        }
        creationProblem = nil
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = lo_server_enable_queue(server, 0, 0)
        lo_server_set_error_context(server, context)
        lo_server_add_bundle_handlers(server, { tag, context in
            let decoder = Unmanaged<OSCBundleDecoder>.fromOpaque(context!).takeUnretainedValue()
            if decoder.deepest == 0 { decoder.outerTag = OSCTimeTag(rawValue: UInt64(tag.sec) << 32 | UInt64(tag.frac)) }
            decoder.depth += 1
            decoder.deepest = max(decoder.deepest, decoder.depth)
            return 0
        }, { context in
            let decoder = Unmanaged<OSCBundleDecoder>.fromOpaque(context!).takeUnretainedValue()
            decoder.depth -= 1
            return 0
        }, context)
        // Every message, whatever its address and types (liblo: a method with a NULL path and typespec).
        lo_server_add_method(server, nil, nil, { path, types, argv, argc, message, context in
            let decoder = Unmanaged<OSCBundleDecoder>.fromOpaque(context!).takeUnretainedValue()
            decoder.collect(path: path, types: types, argv: argv, count: Int(argc), message: message)
            return 0
        }, context)
    }

    /// Keeps one message liblo decoded (or the first problem with it).
    private func collect(path: UnsafePointer<CChar>?, types: UnsafePointer<CChar>?, argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?,
                         count: Int, message: lo_message?) {
        guard problem == nil else { return }
        guard entries.count < OSCBundle.maximumMessages else {
            problem = "it holds more than \(OSCBundle.maximumMessages) messages"
            return
        }
        let address = path.map { String(cString: $0) } ?? ""
        guard address.hasPrefix("/") else {
            problem = "the address '\(address)' does not start with '/'"
            return
        }
        var arguments: [OSCArgument] = []
        for index in 0..<count {
            guard let type = types?[index] else { break }
            do throws(OSCError) {
                arguments.append(try OSCArgument(type: UInt8(bitPattern: type), value: argv?[index]))
            } catch {
                problem = "\(address): \(error.message)"
                return
            }
        }
        let tag = message.map { lo_message_get_timestamp($0) } ?? lo_timetag(sec: 0, frac: 1)
        entries.append(OSCBundle.Entry(timeTag: OSCTimeTag(rawValue: UInt64(tag.sec) << 32 | UInt64(tag.frac)),
                                       message: OSCMessage(address, arguments)))
    }

    /// Decodes a bundle.
    func decode(_ packet: UnsafeRawBufferPointer) -> Result<OSCBundle, OSCError> {
        guard let server else { return .failure(OSCError(.malformed, "OSC bundles cannot be decoded: \(creationProblem ?? "liblo failed")")) }
        entries = []
        depth = 0
        deepest = 0
        problem = nil
        outerTag = .immediately
        // liblo compares each element with "#bundle" as a C string: zeros after the packet keep it inside.
        var copy = [UInt8](repeating: 0, count: packet.count + 16)
        copy.withUnsafeMutableBytes { $0.copyMemory(from: packet) }
        let status = copy.withUnsafeMutableBytes { lo_server_dispatch_data(server, $0.baseAddress, packet.count) }
        if status < 0 && problem == nil { problem = OSCMessage.problem(-status) }
        if let problem { return .failure(OSCError(.malformed, "not a valid OSC bundle: \(problem); send a bundle as liblo, QLab or Companion encode it")) }
        if deepest > OSCBundle.maximumDepth {
            return .failure(OSCError(.malformed, "the bundle nests \(deepest) deep; the limit is \(OSCBundle.maximumDepth). Send flatter bundles"))
        }
        return .success(OSCBundle(timeTag: outerTag, entries: entries, depth: max(1, deepest)))
    }
}
