import LockstepTimecode

extension SessionRenderer {
    /// SMPTE LTC in one channel of a rendered file: output sample N carries the LTC of session
    /// sample N (``LTCSignal``), each frame's first bit on the exact sample of its timecode.
    public struct TimecodeChannel: Sendable, Hashable {
        /// The file's channel that carries it, from 0: one of the session's channels (the LTC
        /// replaces what the session plays there) or the one after them (the file gets one
        /// more channel than the session has).
        public var channel: Int
        /// The frame rate.
        public var rate: TimecodeRate
        /// The label of session sample 0.
        public var start: Timecode

        /// Creates the setting.
        public init(channel: Int, rate: TimecodeRate, start: Timecode = Timecode(hours: 0, minutes: 0, seconds: 0, frames: 0)) {
            self.channel = channel
            self.rate = rate
            self.start = start
        }

        /// The signal for a render of `sessionChannels` channels at `rate` Hz.
        /// - Throws: ``TimecodeError`` for a channel past the one after the session's, or a
        ///   start or rate LTC cannot have.
        func signal(sessionChannels: Int, rate sampleRate: Double) throws(TimecodeError) -> LTCSignal {
            guard (0...sessionChannels).contains(channel) else {
                throw TimecodeError("channel \(channel + 1) is not a channel of the file: the session has \(sessionChannels); give 1 to \(sessionChannels + 1) (\(sessionChannels + 1) adds a channel for the LTC)")
            }
            return try LTCSignal(clock: TimecodeClock(rate: rate, sampleRate: Int(sampleRate.rounded()), start: start))
        }

        /// Puts `frames` frames of LTC from session sample `from` into `channel`: of `mix` itself
        /// when the file has the mix's channels, else of `file`, the mix copied in first.
        static func add(_ signal: LTCSignal, channel: Int, from: Int64, frames: Int, mix: inout [Float], channels: Int,
                        into file: inout [Float], fileChannels: Int) {
            if fileChannels == channels {
                mix.withUnsafeMutableBufferPointer { signal.render(into: $0.baseAddress! + channel, stride: channels, from: from, count: frames) }
                return
            }
            for frame in 0..<frames {
                for c in 0..<channels { file[frame * fileChannels + c] = mix[frame * channels + c] }
            }
            file.withUnsafeMutableBufferPointer { signal.render(into: $0.baseAddress! + channel, stride: fileChannels, from: from, count: frames) }
        }
    }
}
