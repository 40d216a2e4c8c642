import CLtc

/// Reads SMPTE LTC from audio with libltc's decoder, and says on which exact sample each frame
/// started: ``write(_:count:at:)`` takes consecutive blocks of a mono signal with the sample time
/// of their first sample and returns the frames completed in them.
///
/// libltc times a frame's start (`off_start`) by a running average of its bit lengths, up to a
/// couple of samples off; the reader keeps the last second of signal and puts each start on the
/// transition it estimates — the sign change nearest to it (within 6 samples) — which is the
/// frame's first sample: every LTC bit, bit 0 too, begins with a transition.
///
/// Not thread-safe, and it allocates when created only: use it from one ordinary thread (never
/// the realtime thread; libltc's decoder is not meant for it).
public final class LTCReader {
    /// One frame read.
    public struct Frame: Hashable, Sendable {
        /// Its label.
        public var timecode: Timecode
        /// Its drop-frame bit.
        public var dropFrame: Bool
        /// The sample time of its first sample (its first transition).
        public var sampleTime: Int64
        /// Its length in samples, as libltc measured it (`off_end − off_start + 1`).
        public var length: Int64
        /// Whether the start lies on a transition found in the signal (false: libltc's estimate).
        public var isExact: Bool

        /// The rate its length and drop-frame bit suggest at `sampleRate`: the nearest of 24, 25
        /// and 30 frames a second, 29.97df when the drop-frame bit is set.
        public func rate(sampleRate: Int) -> TimecodeRate {
            if dropFrame { return .fps2997DropFrame }
            let fps = Double(sampleRate) / Double(max(1, length))
            return [TimecodeRate.fps24, .fps25, .fps30].min { abs(Double($0.numerator) - fps) < abs(Double($1.numerator) - fps) }!
        }
    }

    /// The sample rate of the signal, in Hz.
    public let sampleRate: Int
    private let decoder: OpaquePointer
    private let history: UnsafeMutablePointer<Float>
    private let capacity: Int
    /// The sample time after the last one written (history holds the `capacity` before it).
    private var end: Int64?

    /// Creates a reader for a signal at `sampleRate`.
    /// - Throws: ``TimecodeError`` if libltc cannot make a decoder.
    public init(sampleRate: Int) throws(TimecodeError) {
        guard sampleRate >= 8_000 else { throw TimecodeError("a sample rate of \(sampleRate) Hz is too low for LTC; give 8000 Hz or more") }
        // The decoder's hint: samples per frame at 25 fps (it adapts to the rate it hears).
        guard let decoder = ltc_decoder_create(Int32(sampleRate / 25), 32) else {
            throw TimecodeError("libltc could not create an LTC decoder at \(sampleRate) Hz")
        }
        self.sampleRate = sampleRate
        self.decoder = decoder
        capacity = sampleRate
        history = .allocate(capacity: capacity)
        history.initialize(repeating: 0, count: capacity)
    }

    deinit {
        ltc_decoder_free(decoder)
        history.deallocate()
    }

    /// Feeds `count` samples starting at sample time `sampleTime` and returns the frames that
    /// ended in them, oldest first. Blocks should follow one another; a gap (or an overlap) is
    /// read as a new signal from `sampleTime`: the decoder starts over.
    public func write(_ samples: UnsafePointer<Float>, count: Int, at sampleTime: Int64) -> [Frame] {
        guard count > 0 else { return [] }
        if let end, end != sampleTime {
            ltc_decoder_queue_flush(decoder)
            history.update(repeating: 0, count: capacity)
        }
        for index in 0..<count { history[Int((sampleTime + Int64(index)) % Int64(capacity))] = samples[index] }
        end = sampleTime + Int64(count)
        ltc_decoder_write_float(decoder, UnsafeMutablePointer(mutating: samples), count, ltc_off_t(sampleTime))
        var frames: [Frame] = []
        var frame = LTCFrameExt()
        while ltc_decoder_read(decoder, &frame) != 0 {
            guard frame.reverse == 0 else { continue }
            var time = SMPTETimecode()
            ltc_frame_to_time(&time, &frame.ltc, 0)
            let label = Timecode(hours: Int(time.hours), minutes: Int(time.mins), seconds: Int(time.secs), frames: Int(time.frame))
            let estimate = Int64(frame.off_start)
            let edge = transition(near: estimate)
            frames.append(Frame(timecode: label, dropFrame: frame.ltc.dfbit != 0, sampleTime: edge ?? estimate,
                                length: Int64(frame.off_end) - Int64(frame.off_start) + 1, isExact: edge != nil))
        }
        return frames
    }

    /// The sample time of the sign change nearest to `around` within 6 samples (the sample on
    /// the new side of 0), nil if none is in the history.
    private func transition(near around: Int64) -> Int64? {
        guard let end else { return nil }
        let oldest = end - Int64(capacity) + 1
        for distance in Int64(0)...6 {
            for side in [Int64(-1), 1] {
                let time = around + side * distance
                guard time > oldest, time < end else { continue }
                let before = history[Int((time - 1) % Int64(capacity))], at = history[Int(time % Int64(capacity))]
                if (before < 0) != (at < 0) { return time }
            }
        }
        return nil
    }
}
