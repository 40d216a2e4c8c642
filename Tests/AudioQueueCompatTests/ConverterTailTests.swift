import AudioQueueCompat
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

extension AQCompatTests {
    /// An input queue at another rate than the device's records through libsoxr: at
    /// `AudioQueueStop` the converter's tail (what its filter still holds, about 500 frames at
    /// 44.1 kHz from 48 kHz) must reach the last buffer, so a take is as long at 44.1 kHz as at the
    /// device's 48 kHz.
    @Suite("Converter tail at stop", .serialized)
    struct ConverterTailTests {
        /// Records `deviceFrames` frames of a 48 kHz offline device (a 441 Hz sine, renders of 480)
        /// through a 16-bit mono queue at `rate` with 2048-frame buffers, stops it
        /// synchronously and returns the frames its callbacks got.
        func take(rate: Double, deviceFrames: Int) throws -> Int {
            let (device, queue, log) = try startedOfflineInputQueue(
                rate: 48000, channels: 1, maximumFrames: 480, format: pcm(rate, channels: 1, bits: 16),
                bufferFrames: 2048) { start, frames, channels in
                    for i in 0..<frames { channels[0][i] = Float(0.5 * sin(2 * Double.pi * 441 * Double(start + Int64(i)) / 48000)) }
                }
            defer {
                AudioQueueDispose(queue, true)
                AudioQueueSetDefaultDevice(.standard)
            }
            for _ in 0..<(deviceFrames / 480) { _ = try device.renderFloat(frames: 480) }
            try #require(AudioQueueStop(queue, true) == noErr)
            // The offline device delivers the stop (and the last buffers) at its next renders.
            var running: UInt32 = 1
            for _ in 0..<1000 where running != 0 {
                _ = try device.renderFloat(frames: 480)
                var size = UInt32(4)
                AudioQueueGetProperty(queue, kAudioQueueProperty_IsRunning, &running, &size)
            }
            #expect(running == 0, "the queue did not stop")
            return log.inputs.reduce(0) { $0 + Int($1.packets) }
        }

        @Test("a 2 s take at 44.1 kHz on a 48 kHz device is as long as at 48 kHz: every frame to the stop, the tail flushed")
        func takeLength() throws {
            let deviceFrames = 96_000
            let native = try take(rate: 48000, deviceFrames: deviceFrames)
            let converted = try take(rate: 44100, deviceFrames: deviceFrames)
            let expected = Double(native) * 44100 / 48000
            print("take of \(deviceFrames) device frames, stopped at once: \(native) frames at 48 kHz "
                  + "(\(Double(native) / 48000) s), \(converted) at 44.1 kHz (\(Double(converted) / 44100) s); expected \(expected)")
            #expect(native >= deviceFrames)
            // libsoxr is latency-compensated: n input frames give round(n × 44100/48000) output
            // frames, ±1 at the stream's end (SoxrRateConverter).
            #expect(abs(Double(converted) - expected) <= 1, "\(converted) frames at 44.1 kHz, \(expected) expected")
        }
    }
}
