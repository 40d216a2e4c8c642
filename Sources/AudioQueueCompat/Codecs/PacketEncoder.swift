import CFFmpeg
import Lockstep

/// One encoded packet: its bytes and the frames it carries.
struct EncodedPacket: Sendable, Equatable {
    var data: [UInt8]
    var frames: Int
}

/// Encodes 32-bit float interleaved PCM into packets of a ``CompressedFormat`` with libavcodec
/// (AAC, ALAC, IMA4, µ-law, a-law, FLAC, Opus through libopus).
///
/// Frames are gathered into the codec's packet size; ``finish()`` encodes what is left (a short
/// last packet where the codec allows one, else padded with silence) and drains the codec.
/// Not thread-safe; never used on the realtime thread.
final class PacketEncoder {
    let format: CompressedFormat
    /// Frames each packet carries (the last may carry fewer).
    let framesPerPacket: Int
    /// Frames of codec delay before the first input frame (Apple's priming frames).
    let primingFrames: Int
    /// Apple's magic cookie for the stream (empty for formats without one).
    let cookie: [UInt8]
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var pending: [Float] = []
    private let smallLastFrame: Bool
    /// Whether packets of one frame (the codec takes any number of frames at once, and hands
    /// back one block) are encoded many at a time and split into packets of `bytesPerPacket`.
    private var splitsPackets: Bool { framesPerPacket == 1 && format.bytesPerPacket > 0 }
    /// Input frames taken so far and packets' frames handed out, for the last packet's length.
    private(set) var inputFrames = 0
    private var outputFrames = 0

    /// Opens an encoder for `format`; `bitRate` (bits per second, AAC and Opus) 0 picks 64 kb/s
    /// a channel.
    /// - Throws: `kAudioFormatUnsupportedDataFormatError` when FFmpeg has no encoder for it.
    init(format: CompressedFormat, bitRate: Int = 0) throws(AudioQueueError) {
        _ = FFmpeg.quiet
        self.format = format
        let name: String? = format.codec == .opus ? "libopus" : (format.codec == .mp3 ? "libmp3lame" : nil)
        let codec = name.flatMap { avcodec_find_encoder_by_name($0) } ?? avcodec_find_encoder(format.codec.codecID)
        guard let codec, let context = avcodec_alloc_context3(codec) else {
            throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "no encoder for \(format)")
        }
        self.context = context
        context.pointee.sample_rate = Int32(format.sampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(format.channelCount))
        context.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        context.pointee.sample_fmt = Self.sampleFormat(codec, format)
        if format.codec == .alac {
            context.pointee.bits_per_raw_sample = [1: 16, 2: 20, 3: 24, 4: 32][format.formatFlags] ?? 16
        }
        if format.codec == .aac || format.codec == .opus || format.codec == .mp3 {
            context.pointee.bit_rate = Int64(bitRate > 0 ? bitRate : 64000 * format.channelCount)
        }
        if format.codec == .flac, format.framesPerPacket > 0 { context.pointee.frame_size = Int32(format.framesPerPacket) }
        if format.codec == .alac, format.framesPerPacket > 0 { context.pointee.frame_size = Int32(format.framesPerPacket) }
        let result = avcodec_open2(context, codec, nil)
        guard result >= 0 else {
            throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "the \(format) encoder could not be opened: \(FFmpeg.message(result))")
        }
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        framesPerPacket = context.pointee.frame_size > 0 ? Int(context.pointee.frame_size) : (format.framesPerPacket > 0 ? format.framesPerPacket : 1)
        primingFrames = Int(context.pointee.initial_padding)
        smallLastFrame = codec.pointee.capabilities & (AV_CODEC_CAP_SMALL_LAST_FRAME | AV_CODEC_CAP_VARIABLE_FRAME_SIZE) != 0
        let extradata = context.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(context.pointee.extradata_size))) } ?? []
        cookie = MagicCookie.cookie(extradata: extradata, codec: format.codec, averageBitRate: Int(context.pointee.bit_rate))
    }

    deinit {
        avcodec_free_context(&context)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    private static func sampleFormat(_ codec: UnsafePointer<AVCodec>, _ format: CompressedFormat) -> AVSampleFormat {
        var supported: [AVSampleFormat] = []
        if var p = codec.pointee.sample_fmts {
            while p.pointee != AV_SAMPLE_FMT_NONE { supported.append(p.pointee); p += 1 }
        }
        let wide = format.codec == .alac ? format.formatFlags >= 2 : (format.codec == .flac && format.formatFlags >= 2)
        let preferred: [AVSampleFormat] = wide ? [AV_SAMPLE_FMT_S32P, AV_SAMPLE_FMT_S32] : [AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_S16P, AV_SAMPLE_FMT_S16]
        return preferred.first(where: supported.contains) ?? supported.first ?? AV_SAMPLE_FMT_FLTP
    }

    /// What one ``encode(_:frames:)`` made: the packets completed, and the codec's failure with
    /// the input frames it lost, if it refused some.
    struct Encoded {
        var packets: [EncodedPacket] = []
        var failure: AudioQueueError?
        var lostFrames = 0
    }

    /// Non-finite input samples (NaN, ±∞) encoded as silence: codecs trap on them or refuse every
    /// later frame (FFmpeg's AAC encoder carries them in its overlap).
    private(set) var nonFiniteSamples = 0

    /// Takes `frames` interleaved frames; returns the packets completed. A packet's worth of
    /// input the codec refuses is lost (and counted in the result); the packets before and after
    /// it are kept, and the input is consumed either way, so one failure loses only its own frames.
    func encode(_ samples: UnsafePointer<Float>, frames: Int) -> Encoded {
        pending.append(contentsOf: UnsafeBufferPointer(start: samples, count: frames * format.channelCount))
        inputFrames += frames
        var result = Encoded()
        let whole = pending.count / format.channelCount / framesPerPacket
        func attempt(offset: Int, frames: Int) {
            do {
                try send(offset: offset, frames: frames, into: &result.packets)
            } catch {
                result.failure = error
                result.lostFrames += frames
            }
        }
        if whole > 0 && splitsPackets {
            // One frame a packet (µ-law, a-law): encoded in one go, split into packets below.
            attempt(offset: 0, frames: whole)
        } else {
            for index in 0..<whole { attempt(offset: index * framesPerPacket, frames: framesPerPacket) }
        }
        pending.removeFirst(whole * framesPerPacket * format.channelCount)
        return result
    }

    /// Encodes what is left and drains the codec; returns the last packets. The encoder takes no
    /// more input afterwards.
    func finish() throws(AudioQueueError) -> [EncodedPacket] {
        var packets: [EncodedPacket] = []
        let left = pending.count / format.channelCount
        if left > 0 {
            if !smallLastFrame {
                pending.append(contentsOf: repeatElement(0, count: (framesPerPacket - left) * format.channelCount))
            }
            try send(offset: 0, frames: smallLastFrame ? left : framesPerPacket, into: &packets)
            pending.removeAll()
        }
        guard let context else { return packets }
        avcodec_send_frame(context, nil)
        try receive(into: &packets)
        return packets
    }

    private func send(offset: Int, frames: Int, into packets: inout [EncodedPacket]) throws(AudioQueueError) {
        guard let context, let frame else { return }
        frame.pointee.nb_samples = Int32(frames)
        frame.pointee.format = context.pointee.sample_fmt.rawValue
        frame.pointee.sample_rate = context.pointee.sample_rate
        av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout)
        guard av_frame_get_buffer(frame, 0) >= 0 else { throw AudioQueueError(kAudio_MemFullError, "out of memory for a frame") }
        defer { av_frame_unref(frame) }
        let channels = format.channelCount
        let sampleFormat = context.pointee.sample_fmt
        let planar = av_sample_fmt_is_planar(sampleFormat) != 0
        let width = Int(av_get_bytes_per_sample(sampleFormat))
        let bits = Int(context.pointee.bits_per_raw_sample)
        var nonFinite = 0
        pending.withUnsafeBufferPointer { source in
            for channel in 0..<channels {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[planar ? channel : 0]!)
                for i in 0..<frames {
                    var value = Double(source[(offset + i) * channels + channel])
                    if !value.isFinite { value = 0; nonFinite += 1 }
                    let at = (planar ? i : i * channels + channel) * width
                    switch av_get_packed_sample_fmt(sampleFormat) {
                    case AV_SAMPLE_FMT_S16:
                        plane.storeBytes(of: Int16(min(max((value * 32768).rounded(), -32768), 32767)), toByteOffset: at, as: Int16.self)
                    case AV_SAMPLE_FMT_S32:
                        // Sources narrower than 32 bits sit in the top bits, as FFmpeg expects.
                        let scale = Double(1 << ((bits > 0 && bits < 32 ? bits : 32) - 1))
                        let integer = Int64(min(max((value * scale).rounded(), -scale), scale - 1))
                        let shifted = integer << (bits > 0 && bits < 32 ? 32 - bits : 0)
                        plane.storeBytes(of: Int32(truncatingIfNeeded: shifted), toByteOffset: at, as: Int32.self)
                    default:
                        plane.storeBytes(of: Float(value), toByteOffset: at, as: Float.self)
                    }
                }
            }
        }
        nonFiniteSamples += nonFinite
        frame.pointee.pts = Int64(outputFrames)
        outputFrames += frames
        let result = avcodec_send_frame(context, frame)
        guard result >= 0 else {
            throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "the \(format) encoder failed: \(FFmpeg.message(result))")
        }
        try receive(into: &packets)
    }

    private func receive(into packets: inout [EncodedPacket]) throws(AudioQueueError) {
        guard let context, let packet else { return }
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == lockstep_averror_again() || result == lockstep_averror_eof() { return }
            guard result >= 0 else {
                throw AudioQueueError(kAudioFormatUnsupportedDataFormatError, "the \(format) encoder failed: \(FFmpeg.message(result))")
            }
            let data = UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))
            if splitsPackets {
                for start in stride(from: 0, to: data.count - format.bytesPerPacket + 1, by: format.bytesPerPacket) {
                    packets.append(EncodedPacket(data: Array(data[start..<(start + format.bytesPerPacket)]), frames: 1))
                }
            } else {
                let frames = packet.pointee.duration > 0 ? Int(packet.pointee.duration) : framesPerPacket
                packets.append(EncodedPacket(data: Array(data), frames: frames))
            }
            av_packet_unref(packet)
        }
    }
}
