/// SLIP framing (RFC 1055), as OSC 1.1 sends packets over a stream (TCP): each packet ends with
/// END (0xC0); an END byte inside it is sent as ESC ESC_END (0xDB 0xDC), an ESC byte as ESC
/// ESC_ESC (0xDB 0xDD).
public enum SLIP {
    /// Ends a frame.
    public static let end: UInt8 = 0xC0
    /// Starts an escape.
    public static let escape: UInt8 = 0xDB
    /// After ESC: an END byte of the packet.
    public static let escapedEnd: UInt8 = 0xDC
    /// After ESC: an ESC byte of the packet.
    public static let escapedEscape: UInt8 = 0xDD

    /// One packet as a SLIP frame: END, the escaped bytes, END (the leading END, which OSC 1.1
    /// recommends, flushes any noise the receiver has before it).
    public static func encode(_ packet: some Sequence<UInt8>) -> [UInt8] {
        var frame: [UInt8] = [end]
        frame.reserveCapacity(packet.underestimatedCount + 8)
        for byte in packet {
            switch byte {
            case end: frame += [escape, escapedEnd]
            case escape: frame += [escape, escapedEscape]
            default: frame.append(byte)
            }
        }
        frame.append(end)
        return frame
    }
}

/// Reassembles SLIP frames from a byte stream read in pieces of any size: a frame may span
/// reads, a read may hold several frames.
///
/// Empty frames (END END) are skipped. A frame that grows beyond ``maximumFrameSize`` is reported
/// once as ``Event/oversized`` and its bytes are discarded up to the next END; a frame with an
/// ESC followed by anything but ESC_END or ESC_ESC is reported as ``Event/badEscape(_:)`` and
/// discarded the same way. Not thread-safe: one reader feeds it.
public struct SLIPDecoder: Sendable {
    /// What ``feed(_:)`` found.
    public enum Event: Sendable, Hashable {
        /// A whole packet, unescaped.
        case frame([UInt8])
        /// A frame longer than the limit (its bytes are dropped up to the next END).
        case oversized
        /// ESC followed by this byte, which is not ESC_END nor ESC_ESC (the frame is dropped).
        case badEscape(UInt8)
    }

    /// The largest packet accepted, in bytes (after unescaping).
    public let maximumFrameSize: Int
    private var frame: [UInt8] = []
    private var escaping = false
    private var discarding = false

    /// A decoder accepting packets up to `maximumFrameSize` bytes.
    public init(maximumFrameSize: Int = 65536) {
        self.maximumFrameSize = maximumFrameSize
    }

    /// Bytes of the current frame held so far.
    public var pendingCount: Int { frame.count }

    /// Takes the next bytes of the stream; returns the frames they complete and any problems,
    /// in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if byte == SLIP.end {
                if !discarding && !escaping && !frame.isEmpty { events.append(.frame(frame)) }
                if escaping && !discarding { events.append(.badEscape(byte)) }
                frame.removeAll(keepingCapacity: frame.count <= 4096)
                escaping = false
                discarding = false
                continue
            }
            if discarding { continue }
            var value = byte
            if escaping {
                escaping = false
                switch byte {
                case SLIP.escapedEnd: value = SLIP.end
                case SLIP.escapedEscape: value = SLIP.escape
                default:
                    events.append(.badEscape(byte))
                    discard()
                    continue
                }
            } else if byte == SLIP.escape {
                escaping = true
                continue
            }
            guard frame.count < maximumFrameSize else {
                events.append(.oversized)
                discard()
                continue
            }
            frame.append(value)
        }
        return events
    }

    /// Drops the current frame up to the next END.
    private mutating func discard() {
        frame.removeAll()
        escaping = false
        discarding = true
    }
}
