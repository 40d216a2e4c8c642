import CFFmpeg
import Lockstep

/// FFmpeg's shared set-up and its error messages.
enum FFmpeg {
    /// Silences FFmpeg's own logging (its errors come back as result codes, said in our words).
    static let quiet: Void = { av_log_set_level(AV_LOG_QUIET) }()

    /// FFmpeg's text for an error code.
    static func message(_ code: Int32) -> String {
        var text = [CChar](repeating: 0, count: 128)
        av_strerror(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Decodes packets of a ``CompressedFormat`` into 32-bit float interleaved PCM with libavcodec.
///
/// Not thread-safe: its owner serializes calls. Never used on the realtime thread (it allocates).
final class PacketDecoder {
    let format: CompressedFormat
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?

    /// Opens a decoder; `cookie` is Apple's magic cookie for the format (see ``MagicCookie``).
    /// - Throws: `kAudioFormatUnsupportedDataFormatError` when the codec cannot be opened with it.
    init(format: CompressedFormat, cookie: [UInt8]) throws(AudioQueueError) {
        _ = FFmpeg.quiet
        self.format = format
        var extradata = try MagicCookie.extradata(cookie, codec: format.codec)
        if extradata.isEmpty, format.codec == .aac, let config = Self.audioSpecificConfig(format) { extradata = config }
        if format.codec == .alac, extradata.isEmpty {
            throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "ALAC needs its magic cookie (kAudioQueueProperty_MagicCookie, from the file's kAudioFilePropertyMagicCookieData) before audio is decoded")
        }
        guard let codec = avcodec_find_decoder(format.codec.codecID), let context = avcodec_alloc_context3(codec) else {
            throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "no decoder for \(format)")
        }
        self.context = context
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        context.pointee.sample_rate = Int32(format.sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(format.channelCount))
        if format.codec == .ima4 { context.pointee.block_align = Int32(format.bytesPerPacket) }
        // Every decoded frame comes out: the codec's own skipping (Opus drops its cookie's
        // pre-skip) is off, since Apple's decoders leave priming to the packet table and trims.
        context.pointee.flags2 |= Int32(AV_CODEC_FLAG2_SKIP_MANUAL)
        if !extradata.isEmpty {
            let size = extradata.count
            guard let data = av_mallocz(size + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
                throw AudioQueueError(kAudio_MemFullError, "out of memory for the codec's configuration")
            }
            data.copyMemory(from: extradata, byteCount: size)
            context.pointee.extradata = data.assumingMemoryBound(to: UInt8.self)
            context.pointee.extradata_size = Int32(size)
        }
        let result = avcodec_open2(context, codec, nil)
        guard result >= 0, frame != nil, packet != nil else {
            throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "the \(format) decoder refused its configuration (cookie of \(cookie.count) bytes): \(FFmpeg.message(result))")
        }
    }

    deinit {
        avcodec_free_context(&context)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// The AudioSpecificConfig of an AAC format that came without a cookie.
    static func audioSpecificConfig(_ format: CompressedFormat) -> [UInt8]? {
        guard let index = ADTSHeader.sampleRates.firstIndex(of: format.sampleRate), format.channelCount <= 7 else { return nil }
        let value = Int(format.formatFlags) << 11 | index << 7 | format.channelCount << 3
        return [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    /// Decodes one packet and appends its frames, interleaved, to `output`; returns the frames
    /// (at least `framesPerPacket`, see below).
    /// - Throws: `kAudioFileInvalidFileError`-style ``AudioQueueError`` with `status` for a packet the
    ///   codec cannot decode, or audio of another rate or channel count than the format's.
    func decode(_ bytes: UnsafeRawBufferPointer, into output: inout [Float], status: OSStatus) throws(AudioQueueError) -> Int {
        guard let context, let packet, let frame else { return 0 }
        guard !bytes.isEmpty else { return 0 }
        guard av_new_packet(packet, Int32(bytes.count)) >= 0 else {
            throw AudioQueueError(kAudio_MemFullError, "out of memory for a \(bytes.count)-byte packet")
        }
        defer { av_packet_unref(packet) }
        packet.pointee.data.update(from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        var result = avcodec_send_packet(context, packet)
        guard result >= 0 else {
            throw AudioQueueError(status, "a \(bytes.count)-byte \(fourCharCodeString(format.codec.formatID)) packet could not be decoded: \(FFmpeg.message(result))")
        }
        var frames = 0
        while true {
            result = avcodec_receive_frame(context, frame)
            if result == lockstep_averror_again() || result == lockstep_averror_eof() { break }
            guard result >= 0 else {
                throw AudioQueueError(status, "a \(fourCharCodeString(format.codec.formatID)) packet could not be decoded: \(FFmpeg.message(result))")
            }
            defer { av_frame_unref(frame) }
            let channels = Int(frame.pointee.ch_layout.nb_channels)
            guard channels == format.channelCount, Double(frame.pointee.sample_rate) == format.sampleRate else {
                throw AudioQueueError(status, "the packets decode to \(frame.pointee.sample_rate) Hz, \(channels) channels, but the format says \(format.sampleRate) Hz, \(format.channelCount) channels")
            }
            frames += Self.appendInterleaved(frame, channels: channels, to: &output)
        }
        // A packet stands for framesPerPacket frames: a short last ALAC (or FLAC) packet is padded
        // with silence, which the packet table's remainder then trims (as Apple counts it).
        if format.codec != .opus, format.framesPerPacket > 0, frames > 0, frames < format.framesPerPacket {
            output.append(contentsOf: repeatElement(0, count: (format.framesPerPacket - frames) * format.channelCount))
            frames = format.framesPerPacket
        }
        return frames
    }

    /// Forgets what the codec carried over between packets (after a seek, reset or discontinuity).
    func reset() {
        if let context { avcodec_flush_buffers(context) }
    }

    /// Appends the frame's samples as interleaved floats; integers map exactly to −1…1
    /// (divided by 2^(bits−1)).
    static func appendInterleaved(_ frame: UnsafeMutablePointer<AVFrame>, channels: Int, to output: inout [Float]) -> Int {
        let count = Int(frame.pointee.nb_samples)
        let format = AVSampleFormat(frame.pointee.format)
        let planar = av_sample_fmt_is_planar(format) != 0
        let width = Int(av_get_bytes_per_sample(format))
        let base = output.count
        output.append(contentsOf: repeatElement(0, count: count * channels))
        let data = frame.pointee.extended_data!
        output.withUnsafeMutableBufferPointer { out in
            for channel in 0..<channels {
                let plane = UnsafeRawPointer(data[planar ? channel : 0]!)
                let stride = planar ? width : width * channels
                let first = planar ? 0 : channel * width
                for i in 0..<count {
                    let at = first + i * stride
                    let value: Float
                    switch av_get_packed_sample_fmt(format) {
                    case AV_SAMPLE_FMT_U8: value = (Float(plane.load(fromByteOffset: at, as: UInt8.self)) - 128) / 128
                    case AV_SAMPLE_FMT_S16: value = Float(plane.loadUnaligned(fromByteOffset: at, as: Int16.self)) / 32768
                    case AV_SAMPLE_FMT_S32: value = Float(Double(plane.loadUnaligned(fromByteOffset: at, as: Int32.self)) / 2_147_483_648)
                    case AV_SAMPLE_FMT_DBL: value = Float(plane.loadUnaligned(fromByteOffset: at, as: Double.self))
                    default: value = plane.loadUnaligned(fromByteOffset: at, as: Float.self)
                    }
                    out[base + i * channels + channel] = value
                }
            }
        }
        return count
    }
}
