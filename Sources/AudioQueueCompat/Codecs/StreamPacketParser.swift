import Lockstep

/// One MPEG audio Layer III frame header (ISO 11172-3, 13818-3; MPEG 2.5).
struct MPEGAudioHeader: Sendable, Equatable {
    private static let bitRates1: [Int] = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    private static let bitRates2: [Int] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
    private static let rates: [[Int]] = [[11025, 12000, 8000], [], [22050, 24000, 16000], [44100, 48000, 32000]]

    /// 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5.
    var version: Int
    var sampleRate: Int
    var channels: Int
    var bitRate: Int
    var frameLength: Int
    var hasCRC: Bool

    var framesPerPacket: Int { version == 3 ? 1152 : 576 }

    /// Parses the 4 bytes at `bytes`; nil unless they are a valid Layer III header (free format
    /// is refused: its frames have no length in the header).
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { return nil }
        version = Int(bytes[1] >> 3 & 0x03)
        guard version != 1, bytes[1] >> 1 & 0x03 == 1 else { return nil }   // reserved version; Layer III only
        hasCRC = bytes[1] & 0x01 == 0
        let bitRateIndex = Int(bytes[2] >> 4), rateIndex = Int(bytes[2] >> 2 & 0x03)
        guard bitRateIndex != 0, bitRateIndex != 15, rateIndex != 3 else { return nil }
        bitRate = (version == 3 ? Self.bitRates1 : Self.bitRates2)[bitRateIndex] * 1000
        sampleRate = Self.rates[version][rateIndex]
        channels = bytes[3] >> 6 == 3 ? 1 : 2
        let padding = Int(bytes[2] >> 1 & 0x01)
        frameLength = (version == 3 ? 144 : 72) * bitRate / sampleRate + padding
    }

    /// Whether `other` belongs to the same stream (version, rate, channels).
    func matches(_ other: MPEGAudioHeader) -> Bool {
        version == other.version && sampleRate == other.sampleRate && channels == other.channels
    }

    var streamDescription: AudioStreamBasicDescription {
        AudioStreamBasicDescription(mSampleRate: Double(sampleRate), mFormatID: kAudioFormatMPEGLayer3, mFormatFlags: 0,
                                    mBytesPerPacket: 0, mFramesPerPacket: UInt32(framesPerPacket), mBytesPerFrame: 0,
                                    mChannelsPerFrame: UInt32(channels), mBitsPerChannel: 0, mReserved: 0)
    }

    /// The Xing/Info frame's facts (LAME's VBR header, which carries no audio): frames and bytes
    /// of the stream, and the encoder's delay and padding; nil if `frame` is not one.
    static func infoFrame(_ frame: UnsafeRawBufferPointer, _ header: MPEGAudioHeader) -> (frames: Int?, bytes: Int?, delay: Int?, padding: Int?)? {
        let side = header.version == 3 ? (header.channels == 1 ? 17 : 32) : (header.channels == 1 ? 9 : 17)
        let at = 4 + (header.hasCRC ? 2 : 0) + side
        guard frame.count >= at + 8 else { return nil }
        let tag = String(decoding: frame[at..<(at + 4)], as: UTF8.self)
        guard tag == "Xing" || tag == "Info" else { return nil }
        func be32(_ i: Int) -> Int? { i + 4 <= frame.count ? Int(frame[i]) << 24 | Int(frame[i + 1]) << 16 | Int(frame[i + 2]) << 8 | Int(frame[i + 3]) : nil }
        let flags = be32(at + 4) ?? 0
        var i = at + 8
        var frames: Int?, bytes: Int?
        if flags & 1 != 0 { frames = be32(i); i += 4 }
        if flags & 2 != 0 { bytes = be32(i); i += 4 }
        if flags & 4 != 0 { i += 100 }
        if flags & 8 != 0 { i += 4 }
        var delay: Int?, padding: Int?
        if i + 24 <= frame.count, ["LAME", "Lavf", "Lavc"].contains(String(decoding: frame[i..<(i + 4)], as: UTF8.self)) {
            delay = Int(frame[i + 21]) << 4 | Int(frame[i + 22]) >> 4
            padding = Int(frame[i + 22] & 0x0F) << 8 | Int(frame[i + 23])
        }
        return (frames, bytes, delay, padding)
    }
}

/// Finds packets in a byte stream fed in pieces of any size — MP3 (Layer III frames, after an
/// ID3v2 tag, its Xing/LAME header read and not passed on) and AAC in ADTS frames (passed on
/// raw, the header turned into the cookie) — as Audio File Stream Services do.
///
/// Synchronisation needs three consecutive MP3 headers (two for ADTS) that agree; once synced,
/// each complete frame is a packet. A frame that does not follow loses the sync, and the parser
/// looks again. Bytes kept are bounded: never more than what one search needs.
/// Not thread-safe: its owner serializes calls.
final class StreamPacketParser {
    enum Kind { case mp3, adts }

    /// What one parse produced, in order: properties now known, and runs of packets.
    enum Event {
        case property(UInt32)
        case packets(data: [UInt8], descriptions: [AudioStreamPacketDescription])
    }

    /// Bytes searched without finding a stream before giving up.
    static let searchLimit = 1 << 20

    let hint: AudioFileTypeID
    private(set) var kind: Kind?
    private(set) var dataFormat: AudioStreamBasicDescription?
    private(set) var cookie: [UInt8] = []
    /// The stream offset of the first audio packet.
    private(set) var dataOffset: Int64?
    private(set) var ready = false
    private(set) var packetTable: AudioFilePacketTableInfo?
    private(set) var packetCountFromHeader: Int64?
    private(set) var byteCountFromHeader: Int64?
    private(set) var maximumPacketSize = 0
    private(set) var bitRate = 0
    /// Audio bytes and packets passed on since the start (or the last seek).
    private(set) var packetsParsed: Int64 = 0
    private(set) var audioBytesParsed: Int64 = 0
    /// The audio-relative byte offset of each packet, while packets have come in order from the first.
    private(set) var packetOffsets: [Int64] = []
    private var contiguous = true

    private var buffer: [UInt8] = []
    private var head = 0
    /// The stream offset of `buffer[head]`.
    private var offset: Int64 = 0
    private var synced = false
    private var skipBytes = 0
    private var searched = 0
    private var firstFrameSeen = false
    private var mp3Header: MPEGAudioHeader?
    private var adtsHeader: ADTSHeader?

    init(hint: AudioFileTypeID) { self.hint = hint }

    private var available: Int { buffer.count - head }

    /// Parses `bytes`, which follow the previous ones unless `discontinuity`.
    func parse(_ bytes: UnsafeRawBufferPointer, discontinuity: Bool) throws(AudioQueueError) -> [Event] {
        if discontinuity {
            offset += Int64(available)
            buffer.removeAll(keepingCapacity: true)
            head = 0
            synced = false
            contiguous = false
        }
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        var data: [UInt8] = []
        var descriptions: [AudioStreamPacketDescription] = []
        func flushPackets() {
            if !descriptions.isEmpty { events.append(.packets(data: data, descriptions: descriptions)) }
            data.removeAll()
            descriptions.removeAll()
        }
        while true {
            if skipBytes > 0 {
                let n = min(skipBytes, available)
                consume(n)
                skipBytes -= n
                if skipBytes > 0 { break }
            }
            if !synced {
                // An ID3v2 tag at the start of the stream.
                if offset == 0, !firstFrameSeen, available >= 3, buffer[head] == 0x49, buffer[head + 1] == 0x44, buffer[head + 2] == 0x33 {
                    guard available >= 10 else { break }
                    let size = (0..<4).reduce(0) { $0 << 7 | Int(buffer[head + 6 + $1] & 0x7F) }
                    skipBytes = 10 + size + (buffer[head + 5] & 0x10 != 0 ? 10 : 0)
                    continue
                }
                guard try synchronize(&events) else { break }
                continue
            }
            guard let length = frameLength(at: head) else {
                if available >= (kind == .adts ? 7 : 4) { synced = false; continue }    // lost the sync: search again
                break
            }
            guard available >= length else { break }
            try buffer.withBytes { (raw) throws(AudioQueueError) in
                let bytes = UnsafeRawBufferPointer(rebasing: raw[head..<(head + length)])
                if !firstFrameSeen {
                    firstFrameSeen = true
                    if kind == .mp3, let header = mp3Header, let info = MPEGAudioHeader.infoFrame(bytes, header) {
                        readInfo(info, header)
                        return
                    }
                }
                let payload = kind == .adts ? UnsafeRawBufferPointer(rebasing: bytes[(adtsHeader?.headerLength ?? 7)...]) : bytes
                if dataOffset == nil {
                    dataOffset = offset
                    events.append(.property(kAudioFileStreamProperty_DataOffset))
                    ready = true
                    events.append(.property(kAudioFileStreamProperty_ReadyToProducePackets))
                }
                descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(data.count), mVariableFramesInPacket: 0, mDataByteSize: UInt32(payload.count)))
                data.append(contentsOf: payload)
                if contiguous && packetOffsets.count == Int(packetsParsed) { packetOffsets.append(offset - (dataOffset ?? 0)) }
                packetsParsed += 1
                audioBytesParsed += Int64(length)
                maximumPacketSize = max(maximumPacketSize, payload.count)
            }
            consume(length)
        }
        flushPackets()
        compact()
        return events
    }

    private func consume(_ n: Int) {
        head += n
        offset += Int64(n)
    }

    private func compact() {
        if head > 65536 || head == buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
    }

    /// The length of the frame whose header is at `index`, if it is one of this stream; nil if
    /// the bytes are not (or not yet) such a header.
    private func frameLength(at index: Int) -> Int? {
        guard buffer.count - index >= (kind == .adts ? 7 : 4) else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[index...])
            switch kind {
            case .mp3:
                guard let header = MPEGAudioHeader(bytes), mp3Header.map(header.matches) ?? true else { return nil }
                bitRate = header.bitRate
                return header.frameLength
            case .adts:
                guard let header = ADTSHeader(bytes), header.blocks == 1,
                      adtsHeader.map({ $0.audioSpecificConfig == header.audioSpecificConfig }) ?? true else { return nil }
                adtsHeader = header
                return header.frameLength
            case nil:
                return nil
            }
        }
    }

    /// Searches for consecutive agreeing frames; on success drops what precedes them and (the
    /// first time) learns the stream's format. Returns false when more bytes are needed.
    private func synchronize(_ events: inout [Event]) throws(AudioQueueError) -> Bool {
        let kinds: [Kind] = kind.map { [$0] } ?? (hint == kAudioFileAAC_ADTSType ? [.adts] : hint == kAudioFileMP3Type ? [.mp3] : [.mp3, .adts])
        var index = head
        while index + 4 <= buffer.count {
            var needMore = false
            for candidate in kinds {
                switch check(candidate, at: index) {
                case .found:
                    searched = 0
                    consume(index - head)
                    if kind == nil { learn(candidate, &events) }
                    synced = true
                    return true
                case .needMore: needMore = true
                case .no: break
                }
            }
            if needMore { break }
            index += 1
        }
        searched += index - head
        consume(index - head)
        if searched > Self.searchLimit {
            throw AudioQueueError(kind == nil ? kAudioFileStreamError_UnsupportedFileType : kAudioFileStreamError_InvalidFile,
                                  "no \(kind == nil ? "MP3 or ADTS AAC" : "audio") frames in \(searched) bytes of the stream")
        }
        return false
    }

    private enum Check { case found, needMore, no }

    private func check(_ candidate: Kind, at index: Int) -> Check {
        buffer.withUnsafeBytes { raw -> Check in
            var at = index
            let wanted = candidate == .mp3 ? 3 : 2
            var first: (MPEGAudioHeader?, ADTSHeader?) = (nil, nil)
            for _ in 0..<wanted {
                guard raw.count - at >= (candidate == .mp3 ? 4 : 7) else { return .needMore }
                let bytes = UnsafeRawBufferPointer(rebasing: raw[at...])
                let length: Int
                if candidate == .mp3 {
                    guard let header = MPEGAudioHeader(bytes), first.0.map(header.matches) ?? mp3Header.map(header.matches) ?? true else { return .no }
                    first.0 = first.0 ?? header
                    length = header.frameLength
                } else {
                    guard let header = ADTSHeader(bytes), header.blocks == 1,
                          (first.1 ?? adtsHeader).map({ $0.audioSpecificConfig == header.audioSpecificConfig }) ?? true else { return .no }
                    first.1 = first.1 ?? header
                    length = header.frameLength
                }
                at += length
            }
            if candidate == .mp3 { mp3HeaderCandidate = first.0 } else { adtsHeaderCandidate = first.1 }
            return .found
        }
    }

    private var mp3HeaderCandidate: MPEGAudioHeader?
    private var adtsHeaderCandidate: ADTSHeader?

    private func learn(_ candidate: Kind, _ events: inout [Event]) {
        kind = candidate
        if candidate == .mp3, let header = mp3HeaderCandidate {
            mp3Header = header
            dataFormat = header.streamDescription
            bitRate = header.bitRate
        } else if let header = adtsHeaderCandidate {
            adtsHeader = header
            dataFormat = header.streamDescription
            cookie = MagicCookie.esds(audioSpecificConfig: header.audioSpecificConfig, averageBitRate: 0)
        }
        events.append(.property(kAudioFileStreamProperty_FileFormat))
        events.append(.property(kAudioFileStreamProperty_DataFormat))
        if candidate == .adts { events.append(.property(kAudioFileStreamProperty_MagicCookieData)) }
    }

    private func readInfo(_ info: (frames: Int?, bytes: Int?, delay: Int?, padding: Int?), _ header: MPEGAudioHeader) {
        packetCountFromHeader = info.frames.map(Int64.init)
        byteCountFromHeader = info.bytes.map { Int64(max(0, $0 - header.frameLength)) }
        if let frames = info.frames, let delay = info.delay, let padding = info.padding {
            // The decoder adds 529 frames of delay (as libavformat counts them).
            let priming = delay + 529, remainder = max(0, padding - 529)
            let total = Int64(frames) * Int64(header.framesPerPacket)
            if Int64(priming + remainder) <= total {
                packetTable = AudioFilePacketTableInfo(mNumberValidFrames: total - Int64(priming + remainder),
                                                       mPrimingFrames: Int32(priming), mRemainderFrames: Int32(remainder))
            }
        }
    }

    /// Where packet `packet` starts, relative to the first audio packet, and whether that is
    /// estimated; the next bytes parsed must be the ones there.
    func seek(toPacket packet: Int64) throws(AudioQueueError) -> (offset: Int64, estimated: Bool) {
        guard ready, let dataOffset else {
            throw AudioQueueError(kAudioFileStreamError_NotOptimized, "the stream's packets are not known yet; parse until ReadyToProducePackets before seeking")
        }
        guard packet >= 0 else { throw AudioQueueError(kAudioFileStreamError_InvalidPacketOffset, "packet \(packet) is negative") }
        let result: (Int64, Bool)
        if packet < Int64(packetOffsets.count) {
            result = (packetOffsets[Int(packet)], false)
        } else {
            let average = averageBytesPerPacket
            guard average > 0 else { throw AudioQueueError(kAudioFileStreamError_DataUnavailable, "no packets parsed yet to estimate from") }
            result = (Int64((Double(packet) * average).rounded()), true)
        }
        buffer.removeAll(keepingCapacity: true)
        head = 0
        offset = dataOffset + result.0
        synced = false
        return result
    }

    /// Bytes per packet on average (the header's figures when it has them).
    var averageBytesPerPacket: Double {
        if let frames = packetCountFromHeader, let bytes = byteCountFromHeader, frames > 0 { return Double(bytes) / Double(frames) }
        return packetsParsed > 0 ? Double(audioBytesParsed) / Double(packetsParsed) : 0
    }
}
