import CLtc

/// SMPTE linear timecode (LTC) as audio, generated with libltc, as a pure function of the
/// session sample: ``render(into:stride:from:count:)`` of any range gives the same samples as an
/// uninterrupted render, so a seek, a restart or a second run puts every frame on the same sample.
///
/// Each frame's first bit starts on ``TimecodeClock/startSample(ofFrame:)``: the frame's 80 bits
/// are spread over exactly that frame's samples (libltc's encoder, set to the frame's length),
/// the frame's parity bit set so every frame starts on the same polarity. The level is libltc's,
/// −3 dBFS, and its edges have the 40 µs rise time SMPTE asks for.
///
/// Not thread-safe: use one from one thread at a time (a streamer lane, the offline renderer).
/// It allocates only when created.
public final class LTCSignal {
    /// Where the frames fall.
    public let clock: TimecodeClock

    private let encoder: OpaquePointer
    private let standard: LTC_TV_STANDARD
    /// The frame whose samples ``cache`` holds (−1: none).
    private var cachedFrame: Int64 = -1
    private let cache: UnsafeMutablePointer<Float>
    private let capacity: Int

    /// Creates the signal for `clock`.
    /// - Throws: ``TimecodeError`` if libltc cannot make an encoder.
    public init(clock: TimecodeClock) throws(TimecodeError) {
        self.clock = clock
        switch clock.rate {
        case .fps24: standard = LTC_TV_FILM_24
        case .fps25: standard = LTC_TV_625_50
        case .fps2997DropFrame, .fps30: standard = LTC_TV_525_60
        }
        capacity = clock.maximumFrameLength + 4
        // Room for the longest frame and then some (the encoder checks its buffer on every reinit).
        guard let encoder = ltc_encoder_create(Double(clock.sampleRate), Double(clock.sampleRate) / Double(capacity), standard, 0) else {
            throw TimecodeError("libltc could not create an LTC encoder at \(clock.sampleRate) Hz")
        }
        self.encoder = encoder
        cache = .allocate(capacity: capacity)
        cache.initialize(repeating: 0, count: capacity)
    }

    deinit {
        ltc_encoder_free(encoder)
        cache.deallocate()
    }

    /// Writes the LTC of session samples `from ..< from + count` into every `stride`-th float
    /// of `output` (stride 1: a mono buffer; the channel count: one channel of interleaved
    /// audio). Samples before 0 are silent.
    public func render(into output: UnsafeMutablePointer<Float>, stride: Int = 1, from start: Int64, count: Int) {
        var done = 0
        while done < count {
            let sample = start + Int64(done)
            if sample < 0 {
                let silent = Int(min(Int64(count - done), -sample))
                for index in done..<(done + silent) { output[index * stride] = 0 }
                done += silent
                continue
            }
            let frame = clock.frame(containing: sample)
            let frameStart = clock.startSample(ofFrame: frame)
            let length = encode(frame)
            let offset = Int(sample - frameStart)
            let run = min(count - done, length - offset)
            for index in 0..<run { output[(done + index) * stride] = cache[offset + index] }
            done += run
        }
    }

    /// The samples of frame `frame` in ``cache`` (encoded unless they are there already); returns
    /// the frame's length.
    private func encode(_ frame: Int64) -> Int {
        let length = clock.length(ofFrame: frame)
        if frame == cachedFrame { return length }
        // Spread the 80 bits over exactly `length` samples: the encoder's samples per bit are its
        // rate over its frame rate, from a fresh remainder and polarity for each frame.
        ltc_encoder_reinit(encoder, Double(clock.sampleRate), Double(clock.sampleRate) / Double(length), standard, 0)
        var ltcFrame = LTCFrame()
        ltc_frame_reset(&ltcFrame)
        ltcFrame.dfbit = clock.rate.isDropFrame ? 1 : 0
        let label = clock.timecode(ofFrame: frame)
        var time = SMPTETimecode()
        time.hours = UInt8(label.hours)
        time.mins = UInt8(label.minutes)
        time.secs = UInt8(label.seconds)
        time.frame = UInt8(label.frames)
        ltc_time_to_frame(&ltcFrame, &time, standard, 0)      // sets the parity bit
        ltc_encoder_set_frame(encoder, &ltcFrame)
        ltc_encoder_encode_frame(encoder)
        var bytes: UnsafeMutablePointer<ltcsnd_sample_t>?
        let produced = Int(ltc_encoder_get_bufferptr(encoder, &bytes, 1))
        // The encoder rounds its bit lengths from a running remainder: it gives `length` samples,
        // or one fewer or more when the frame's rate does not divide evenly — the last level is
        // held, or the last sample left out, so the next frame still starts on its sample.
        let usable = min(max(produced, 0), length, capacity)
        if let bytes {
            for index in 0..<usable { cache[index] = (Float(bytes[index]) - 128) / 127 }
        }
        let last = usable > 0 ? cache[usable - 1] : 0
        for index in usable..<length { cache[index] = last }
        cachedFrame = frame
        return length
    }
}
