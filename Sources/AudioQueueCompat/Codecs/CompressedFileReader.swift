import CFFmpeg
import Foundation
import Lockstep

/// The packets of a compressed audio file, demultiplexed with libavformat: MP3, AAC (M4A/MP4 and
/// ADTS), ALAC (M4A and CAF) and IMA4 (CAF, AIFC) — the formats whose packets libsndfile does not
/// give. The packets are read once, at open, into memory, with their sizes and the file's packet
/// table (priming and remainder frames).
///
/// Immutable after `init`, so any thread may read it.
final class CompressedFileReader: Sendable {
    let format: CompressedFormat
    let fileType: AudioFileTypeID
    /// Apple's magic cookie (empty for MP3 and IMA4).
    let cookie: [UInt8]
    /// Every packet's bytes, one after another; packet `i` is `offsets[i]..<offsets[i + 1]`.
    let data: [UInt8]
    let offsets: [Int]
    /// Frames of codec delay at the start, and of padding after the last valid frame.
    let primingFrames: Int
    let remainderFrames: Int
    /// The largest packet, in bytes.
    let maximumPacketSize: Int

    var packetCount: Int { offsets.count - 1 }
    /// Frames the packets decode to (priming and remainder included).
    var decodedFrames: Int64 { Int64(packetCount) * Int64(format.framesPerPacket) }
    /// Frames of audio: the decoded frames less priming and remainder.
    var validFrames: Int64 { decodedFrames - Int64(primingFrames) - Int64(remainderFrames) }
    /// The audio data's byte count.
    var byteCount: Int { data.count }

    func packetSize(_ index: Int) -> Int { offsets[index + 1] - offsets[index] }

    /// Opens `path` if libavformat finds in it a stream this reader handles; nil otherwise (the
    /// caller then tries libsndfile, which gives the errors of files neither can read).
    /// - Throws: `kAudioFileInvalidFileError` for a file of such a stream that is damaged.
    static func open(_ path: String) throws(AudioQueueError) -> CompressedFileReader? {
        _ = FFmpeg.quiet
        var context: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_open_input(&context, path, nil, nil) >= 0, let input = context else { return nil }
        defer { avformat_close_input(&context) }
        guard avformat_find_stream_info(input, nil) >= 0 else { return nil }
        let index = av_find_best_stream(input, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let stream = input.pointee.streams[Int(index)], let parameters = stream.pointee.codecpar else { return nil }
        let demuxer = String(cString: input.pointee.iformat.pointee.name)
        let codecID = parameters.pointee.codec_id
        let fileType: AudioFileTypeID
        switch (demuxer, codecID) {
        case ("mp3", AV_CODEC_ID_MP3): fileType = kAudioFileMP3Type
        case ("aac", AV_CODEC_ID_AAC): fileType = kAudioFileAAC_ADTSType
        case ("mov,mp4,m4a,3gp,3g2,mj2", AV_CODEC_ID_AAC), ("mov,mp4,m4a,3gp,3g2,mj2", AV_CODEC_ID_ALAC): fileType = kAudioFileM4AType
        case ("caf", AV_CODEC_ID_AAC), ("caf", AV_CODEC_ID_ALAC), ("caf", AV_CODEC_ID_ADPCM_IMA_QT): fileType = kAudioFileCAFType
        case ("aiff", AV_CODEC_ID_ADPCM_IMA_QT): fileType = kAudioFileAIFCType
        default: return nil
        }
        guard let codec = CompressedFormat.Codec(codecID: codecID) else { return nil }
        let channels = Int(parameters.pointee.ch_layout.nb_channels)
        let rate = Double(parameters.pointee.sample_rate)
        let extradata = parameters.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(parameters.pointee.extradata_size))) } ?? []
        var data: [UInt8] = []
        var offsets = [0]
        var skipStart = 0, skipEnd = 0
        var adtsConfig: [UInt8]?
        guard let packet = av_packet_alloc() else { throw AudioQueueError(kAudio_MemFullError, "out of memory") }
        var packetPointer: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&packetPointer) }
        while av_read_frame(input, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == index, packet.pointee.size > 0 else { continue }
            var bytes = UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))
            if fileType == kAudioFileAAC_ADTSType {
                // Apple's packets of an ADTS file are raw AAC; the header becomes the cookie.
                guard let header = ADTSHeader(bytes), header.blocks == 1, header.frameLength <= bytes.count else {
                    throw AudioQueueError(kAudioFileInvalidFileError, "'\(path)': ADTS frame \(offsets.count) is damaged")
                }
                adtsConfig = adtsConfig ?? header.audioSpecificConfig
                bytes = UnsafeRawBufferPointer(rebasing: bytes[header.headerLength..<header.frameLength])
            }
            var sideSize = 0
            if let side = av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &sideSize), sideSize >= 8 {
                let raw = UnsafeRawPointer(side)
                skipStart += Int(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
                skipEnd += Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
            }
            data.append(contentsOf: bytes)
            offsets.append(data.count)
        }
        guard offsets.count > 1 else {
            throw AudioQueueError(kAudioFileInvalidFileError, "'\(path)' holds no \(fourCharCodeString(codec.formatID)) packets")
        }
        guard channels > 0, rate > 0 else {
            throw AudioQueueError(kAudioFileInvalidFileError, "'\(path)': the stream's rate or channel count is unknown")
        }
        var asbd = AudioStreamBasicDescription(mSampleRate: rate, mFormatID: codec.formatID, mFormatFlags: 0, mBytesPerPacket: 0,
                                               mFramesPerPacket: 0, mBytesPerFrame: 0, mChannelsPerFrame: UInt32(channels),
                                               mBitsPerChannel: 0, mReserved: 0)
        // An ADTS stream says no bit rate: its cookie is the one Audio File Stream Services make.
        var cookie = MagicCookie.cookie(extradata: adtsConfig ?? extradata, codec: codec,
                                        averageBitRate: adtsConfig == nil ? Int(parameters.pointee.bit_rate) : 0)
        if codec == .alac {
            // ALACSpecificConfig: frameLength (4 bytes), version, bitDepth, …
            guard let config = MagicCookie.alacConfig(cookie) else {
                throw AudioQueueError(kAudioFileInvalidFileError, "'\(path)': the ALAC stream has no configuration")
            }
            cookie = config
            asbd.mFramesPerPacket = UInt32(config[0]) << 24 | UInt32(config[1]) << 16 | UInt32(config[2]) << 8 | UInt32(config[3])
            asbd.mFormatFlags = [16: 1, 20: 2, 24: 3, 32: 4][config[5]] ?? 0
        }
        if codec == .aac { asbd.mFormatFlags = UInt32(((MagicCookie.esdsConfig(cookie) ?? [0x10]).first ?? 0x10) >> 3) }
        let format: CompressedFormat
        switch CompressedFormat.make(asbd) {
        case .success(let made)?: format = made
        case .failure(let error)?: throw AudioQueueError(kAudioFileUnsupportedDataFormatError, "'\(path)': \(error.message)")
        case nil: return nil
        }
        let total = Int64(offsets.count - 1) * Int64(format.framesPerPacket)
        var priming = skipStart, remainder = skipEnd
        if let table = ContainerFacts.packetTable(path: path, fileType: fileType, sampleRate: rate, totalFrames: total,
                                                    priming: skipStart) {
            (priming, remainder) = table
        }
        guard priming >= 0, remainder >= 0, Int64(priming) + Int64(remainder) <= total else {
            throw AudioQueueError(kAudioFileInvalidFileError, "'\(path)': its packet table (\(priming) priming, \(remainder) remainder frames) does not fit its \(total) frames")
        }
        var maximum = 0
        for i in 0..<(offsets.count - 1) { maximum = max(maximum, offsets[i + 1] - offsets[i]) }
        return CompressedFileReader(format: format, fileType: fileType, cookie: cookie, data: data, offsets: offsets,
                                    primingFrames: priming, remainderFrames: remainder, maximumPacketSize: maximum)
    }

    private init(format: CompressedFormat, fileType: AudioFileTypeID, cookie: [UInt8], data: [UInt8], offsets: [Int],
                 primingFrames: Int, remainderFrames: Int, maximumPacketSize: Int) {
        self.format = format
        self.fileType = fileType
        self.cookie = cookie
        self.data = data
        self.offsets = offsets
        self.primingFrames = primingFrames
        self.remainderFrames = remainderFrames
        self.maximumPacketSize = maximumPacketSize
    }
}

/// What libavformat does not report exactly, read from the container: the valid frames of an
/// MP4 (its sound track's `mdhd` duration, which counts priming) and a CAF's `pakt` header.
enum ContainerFacts {
    /// (priming, remainder) frames, or nil to keep libavformat's figures.
    static func packetTable(path: String, fileType: AudioFileTypeID, sampleRate: Double, totalFrames: Int64,
                            priming: Int) -> (Int, Int)? {
        guard fileType == kAudioFileM4AType || fileType == kAudioFileCAFType,
              let file = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return nil }
        return file.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> (Int, Int)? in
            if fileType == kAudioFileCAFType {
                guard let pakt = cafChunk(raw, "pakt"), pakt.count >= 24 else { return nil }
                let valid = Int64(bigEndian: pakt.loadUnaligned(fromByteOffset: 8, as: Int64.self))
                let primingFrames = Int(Int32(bigEndian: pakt.loadUnaligned(fromByteOffset: 16, as: Int32.self)))
                let remainderFrames = Int(Int32(bigEndian: pakt.loadUnaligned(fromByteOffset: 20, as: Int32.self)))
                guard primingFrames >= 0, remainderFrames >= 0, valid >= 0 else { return nil }
                return (primingFrames, remainderFrames)
            }
            guard let duration = soundMediaDuration(raw, sampleRate: sampleRate), duration >= Int64(priming),
                  duration <= totalFrames else { return nil }
            return (priming, Int(totalFrames - duration))
        }
    }

    /// The body of the first CAF chunk of `type`.
    static func cafChunk(_ file: UnsafeRawBufferPointer, _ type: String) -> UnsafeRawBufferPointer? {
        guard file.count >= 8, String(decoding: file[0..<4], as: UTF8.self) == "caff" else { return nil }
        var at = 8
        while at + 12 <= file.count {
            let name = String(decoding: file[at..<(at + 4)], as: UTF8.self)
            let size = Int64(bigEndian: file.loadUnaligned(fromByteOffset: at + 4, as: Int64.self))
            let body = at + 12
            let end = size < 0 ? file.count : Int(clamping: Int64(body) + size)
            guard end <= file.count, end >= body else { return nil }
            if name == type { return UnsafeRawBufferPointer(rebasing: file[body..<end]) }
            at = end
        }
        return nil
    }

    /// The `mdhd` duration of the first track whose handler is `soun`, if its time scale is
    /// `sampleRate` (so the duration counts frames).
    static func soundMediaDuration(_ file: UnsafeRawBufferPointer, sampleRate: Double) -> Int64? {
        func boxes(_ range: Range<Int>) -> [(String, Range<Int>)] {
            var found: [(String, Range<Int>)] = []
            var at = range.lowerBound
            while at + 8 <= range.upperBound {
                var size = Int(UInt32(bigEndian: file.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                var header = 8
                if size == 1, at + 16 <= range.upperBound {
                    size = Int(clamping: UInt64(bigEndian: file.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)))
                    header = 16
                } else if size == 0 {
                    size = range.upperBound - at
                }
                guard size >= header, at + size <= range.upperBound else { break }
                found.append((String(decoding: file[(at + 4)..<(at + 8)], as: UTF8.self), (at + header)..<(at + size)))
                at += size
            }
            return found
        }
        func child(_ range: Range<Int>, _ name: String) -> Range<Int>? { boxes(range).first { $0.0 == name }?.1 }
        guard let moov = child(0..<file.count, "moov") else { return nil }
        for (name, trak) in boxes(moov) where name == "trak" {
            guard let mdia = child(trak, "mdia"), let hdlr = child(mdia, "hdlr"), hdlr.count >= 12,
                  String(decoding: file[(hdlr.lowerBound + 8)..<(hdlr.lowerBound + 12)], as: UTF8.self) == "soun",
                  let mdhd = child(mdia, "mdhd"), mdhd.count >= 24 else { continue }
            let at = mdhd.lowerBound
            let long = file[at] == 1
            guard !long || mdhd.count >= 32 else { return nil }
            let scale = UInt32(bigEndian: file.loadUnaligned(fromByteOffset: at + (long ? 20 : 12), as: UInt32.self))
            guard Double(scale) == sampleRate else { return nil }
            if long { return Int64(bitPattern: UInt64(bigEndian: file.loadUnaligned(fromByteOffset: at + 24, as: UInt64.self))) }
            return Int64(UInt32(bigEndian: file.loadUnaligned(fromByteOffset: at + 16, as: UInt32.self)))
        }
        return nil
    }
}
