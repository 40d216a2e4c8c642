import CFFmpeg
import Foundation
import Lockstep

/// MPEG-4 audio (M4A). The corresponding Apple constant is `kAudioFileM4AType` (`'m4af'`).
public let kAudioFileM4AType = fourCharCode("m4af")
/// MPEG-4. The corresponding Apple constant is `kAudioFileMPEG4Type` (`'mp4f'`).
public let kAudioFileMPEG4Type = fourCharCode("mp4f")
/// AAC in ADTS frames. The corresponding Apple constant is `kAudioFileAAC_ADTSType` (`'adts'`).
public let kAudioFileAAC_ADTSType = fourCharCode("adts")

/// Writes packets of a ``CompressedFormat`` into a container with libavformat's muxers: M4A/MP4
/// (AAC, ALAC), CAF (ALAC, IMA4, µ-law, a-law) and ADTS (AAC), through a file descriptor.
///
/// The header is written with the first packet (so a cookie set before it is in the file); the
/// last packet is held back until ``close()`` so its duration can end the audio where the packet
/// table says: an M4A's media duration and edit list, a CAF's `pakt` header carry the priming and
/// remainder frames exactly. Not thread-safe; its owner serializes calls.
final class CompressedFileWriter {
    let format: CompressedFormat
    let fileType: AudioFileTypeID
    /// Apple's magic cookie; set it before the first packet.
    var cookie: [UInt8] = []
    var primingFrames = 0
    var remainderFrames = 0
    /// Whether the priming frames may still change: always for CAF (its `pakt` is written at the
    /// end), for MPEG-4 only until the first packet is muxed (its time stamps carry the priming).
    var canChangePriming: Bool { fileType == kAudioFileCAFType || framesWritten == 0 }
    private(set) var packetsWritten: Int64 = 0
    private(set) var bytesWritten: Int64 = 0
    private(set) var maximumPacketSize = 0
    private let sink: DescriptorSink
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var stream: UnsafeMutablePointer<AVStream>?
    private var headerWritten = false
    private var heldBack: [UInt8]?
    private var framesWritten: Int64 = 0

    /// The libavformat muxer for a file type and codec, or nil if it cannot hold the codec.
    static func muxer(_ type: AudioFileTypeID, _ codec: CompressedFormat.Codec) -> String? {
        switch (type, codec) {
        case (kAudioFileM4AType, .aac), (kAudioFileM4AType, .alac): "ipod"
        case (kAudioFileMPEG4Type, .aac), (kAudioFileMPEG4Type, .alac): "mp4"
        case (kAudioFileCAFType, .alac), (kAudioFileCAFType, .ima4), (kAudioFileCAFType, .ulaw), (kAudioFileCAFType, .alaw): "caf"
        case (kAudioFileAAC_ADTSType, .aac): "adts"
        default: nil
        }
    }

    /// The muxer for `type` and `format`, or the error that says which types hold which formats.
    static func requireMuxer(_ type: AudioFileTypeID, _ format: CompressedFormat) throws(AudioQueueError) -> String {
        guard let name = muxer(type, format.codec) else {
            throw AudioQueueError(kAudioFileUnsupportedDataFormatError, "a '\(fourCharCodeString(type))' file cannot hold \(fourCharCodeString(format.codec.formatID)) here; write AAC and ALAC to kAudioFileM4AType, ALAC, IMA4, µ-law and a-law to kAudioFileCAFType, AAC to kAudioFileAAC_ADTSType")
        }
        return name
    }

    /// Prepares to write into `descriptor` (open for reading and writing, at offset 0; not closed here).
    init(descriptor: Int32, fileType: AudioFileTypeID, format: CompressedFormat) throws(AudioQueueError) {
        _ = FFmpeg.quiet
        self.format = format
        self.fileType = fileType
        sink = DescriptorSink(descriptor: descriptor)
        let name = try Self.requireMuxer(fileType, format)
        var output: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&output, nil, name, nil) >= 0, let output else {
            throw AudioQueueError(kAudioFileUnspecifiedError, "the \(name) muxer could not be set up")
        }
        context = output
        guard let stream = avformat_new_stream(output, nil), let parameters = stream.pointee.codecpar else {
            throw AudioQueueError(kAudio_MemFullError, "out of memory")
        }
        self.stream = stream
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = format.codec.codecID
        parameters.pointee.sample_rate = Int32(format.sampleRate)
        av_channel_layout_default(&parameters.pointee.ch_layout, Int32(format.channelCount))
        parameters.pointee.frame_size = Int32(format.framesPerPacket)
        parameters.pointee.block_align = Int32(format.bytesPerPacket)
        if format.codec == .ulaw || format.codec == .alaw { parameters.pointee.bits_per_coded_sample = 8 }
        stream.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        let buffer = av_malloc(65536)
        guard let buffer, let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), 65536, 1,
                                                      Unmanaged.passUnretained(sink).toOpaque(), nil,
                                                      { opaque, data, size in
                                                          DescriptorSink.from(opaque).write(data, Int(size))
                                                      },
                                                      { opaque, offset, whence in
                                                          DescriptorSink.from(opaque).seek(offset, whence)
                                                      }) else {
            throw AudioQueueError(kAudio_MemFullError, "out of memory")
        }
        output.pointee.pb = io
    }

    deinit {
        if let context {
            if let io = context.pointee.pb {
                av_freep(&io.pointee.buffer)
                avio_context_free(&context.pointee.pb)
            }
            avformat_free_context(context)
        }
    }

    /// Appends one packet of `format.framesPerPacket` frames.
    func write(_ packet: UnsafeRawBufferPointer) throws(AudioQueueError) {
        if !headerWritten { try writeHeader() }
        if let previous = heldBack {
            try mux(previous, frames: format.framesPerPacket)
        }
        heldBack = Array(packet)
        packetsWritten += 1
        bytesWritten += Int64(packet.count)
        maximumPacketSize = max(maximumPacketSize, packet.count)
    }

    private func writeHeader() throws(AudioQueueError) {
        guard let context, let parameters = stream?.pointee.codecpar else { return }
        let extradata = try MagicCookie.extradata(cookie, codec: format.codec)
        if format.codec == .alac && extradata.isEmpty || format.codec == .aac && extradata.isEmpty && PacketDecoder.audioSpecificConfig(format) == nil {
            throw AudioQueueError(kAudioFileInvalidFileError, "set the magic cookie (kAudioFilePropertyMagicCookieData) before writing \(fourCharCodeString(format.codec.formatID)) packets")
        }
        let bytes = extradata.isEmpty ? (format.codec == .aac ? PacketDecoder.audioSpecificConfig(format) ?? [] : []) : extradata
        if !bytes.isEmpty, let data = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) {
            data.copyMemory(from: bytes, byteCount: bytes.count)
            parameters.pointee.extradata = data.assumingMemoryBound(to: UInt8.self)
            parameters.pointee.extradata_size = Int32(bytes.count)
        }
        // MPEG-4's edit list counts in the movie's time scale (libavformat's default: 1000 a
        // second); at the sample rate it holds the valid frames exactly.
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if fileType == kAudioFileM4AType || fileType == kAudioFileMPEG4Type, format.sampleRate == format.sampleRate.rounded() {
            av_dict_set(&options, "movie_timescale", String(Int(format.sampleRate)), 0)
        }
        let result = avformat_write_header(context, &options)
        guard result >= 0 else {
            throw AudioQueueError(sink.failed ? kAudioFilePermissionsError : kAudioFileUnsupportedDataFormatError, "the file's header could not be written: \(FFmpeg.message(result))")
        }
        headerWritten = true
    }

    private func mux(_ bytes: [UInt8], frames: Int) throws(AudioQueueError) {
        guard let context, let stream, let packet = av_packet_alloc() else { throw AudioQueueError(kAudio_MemFullError, "out of memory") }
        var pointer: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&pointer) }
        guard av_new_packet(packet, Int32(bytes.count)) >= 0 else { throw AudioQueueError(kAudio_MemFullError, "out of memory") }
        packet.pointee.data.update(from: bytes, count: bytes.count)
        let pts = framesWritten - Int64(primingFrames)
        packet.pointee.pts = pts
        packet.pointee.dts = pts
        packet.pointee.duration = Int64(frames)
        packet.pointee.stream_index = 0
        av_packet_rescale_ts(packet, AVRational(num: 1, den: Int32(format.sampleRate)), stream.pointee.time_base)
        framesWritten += Int64(frames)
        let result = av_write_frame(context, packet)
        guard result >= 0, !sink.failed else {
            throw AudioQueueError(kAudioFileUnspecifiedError, "a packet could not be written: \(sink.failed ? sink.error : FFmpeg.message(result))")
        }
    }

    /// Writes the last packet (ending the audio after the remainder), the trailer, and the
    /// packet table.
    func close() throws(AudioQueueError) {
        if !headerWritten { try writeHeader() }
        if let last = heldBack {
            heldBack = nil
            try mux(last, frames: max(1, format.framesPerPacket - remainderFrames))
        }
        guard let context else { return }
        let result = av_write_trailer(context)
        guard result >= 0, !sink.failed else {
            throw AudioQueueError(kAudioFileUnspecifiedError, "the file could not be finished: \(sink.failed ? sink.error : FFmpeg.message(result))")
        }
        if fileType == kAudioFileCAFType { try patchPacketTable() }
    }

    /// Sets a CAF's `pakt` header to the valid, priming and remainder frames (libavformat writes
    /// every frame as valid and none as priming or remainder). A format of constant-size packets
    /// (IMA4, µ-law, a-law) gets no `pakt` from libavformat: where it has priming or remainder
    /// frames (IMA4's padded last packet), a `pakt` chunk without packet descriptions is appended
    /// after the audio data, as the CAF specification allows for constant bit rates.
    private func patchPacketTable() throws(AudioQueueError) {
        let fd = sink.descriptor
        let valid = packetsWritten * Int64(format.framesPerPacket) - Int64(primingFrames) - Int64(remainderFrames)
        var fields: [UInt8] = []
        func append(_ value: Int64, bytes: Int) {
            for shift in stride(from: 8 * (bytes - 1), through: 0, by: -8) { fields.append(UInt8(truncatingIfNeeded: value >> Int64(shift))) }
        }
        append(valid, bytes: 8)
        append(Int64(primingFrames), bytes: 4)
        append(Int64(remainderFrames), bytes: 4)
        func write(_ bytes: [UInt8], at offset: Int64) throws(AudioQueueError) {
            guard pwrite(fd, bytes, bytes.count, off_t(offset)) == bytes.count else {
                throw AudioQueueError(kAudioFileUnspecifiedError, "the packet table could not be written: \(String(cString: strerror(errno)))")
            }
        }
        var at: Int64 = 8
        var header = [UInt8](repeating: 0, count: 12)
        while pread(fd, &header, 12, off_t(at)) == 12 {
            let size = header[4..<12].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            if String(decoding: header[0..<4], as: UTF8.self) == "pakt" {
                try write(fields, at: at + 12 + 8)
                return
            }
            guard size >= 0 else { return }      // a data chunk of unknown size ends the file
            at += 12 + size
        }
        guard format.bytesPerPacket > 0, format.framesPerPacket > 0, primingFrames > 0 || remainderFrames > 0 else { return }
        // At the end of the chunks: "pakt", its size (24), the packet count (the packets of
        // constant size, so a reader knows the data's length in packets), then the frames.
        var chunk = Array("pakt".utf8)
        fields.insert(contentsOf: [UInt8](repeating: 0, count: 8), at: 0)
        for shift in stride(from: 56, through: 0, by: -8) { fields[7 - shift / 8] = UInt8(truncatingIfNeeded: packetsWritten >> Int64(shift)) }
        for shift in stride(from: 56, through: 0, by: -8) { chunk.append(UInt8(truncatingIfNeeded: Int64(fields.count) >> Int64(shift))) }
        try write(chunk + fields, at: at)
    }
}

/// libavformat's output: writes and seeks on a file descriptor, remembering the first failure.
final class DescriptorSink {
    let descriptor: Int32
    private(set) var failed = false
    private(set) var error = ""

    init(descriptor: Int32) { self.descriptor = descriptor }

    static func from(_ opaque: UnsafeMutableRawPointer?) -> DescriptorSink {
        Unmanaged<DescriptorSink>.fromOpaque(opaque!).takeUnretainedValue()
    }

    func write(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int) -> Int32 {
        var done = 0
        while done < size, let data {
            let n = Foundation.write(descriptor, data + done, size - done)
            if n < 0 {
                if errno == EINTR { continue }
                failed = true
                error = String(cString: strerror(errno))
                return lockstep_averror_eof()
            }
            done += n
        }
        return Int32(size)
    }

    func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        if whence & Int32(AVSEEK_SIZE) != 0 {
            var info = stat()
            return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : -1
        }
        return Int64(lseek(descriptor, off_t(offset), whence & ~Int32(AVSEEK_FORCE)))
    }
}
