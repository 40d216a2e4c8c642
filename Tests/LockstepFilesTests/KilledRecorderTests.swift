import Foundation
import Lockstep
import LockstepFiles
import LockstepTestSupport
import Testing

/// What a `FileRecorder` take holds if the process is killed at a given moment: the file as it
/// stands on disk, copied while the recorder is still writing (what SIGKILL leaves), read back.
/// Offline: the recorder takes the engine's own mix, rendered by an ``OfflineDevice``.
@Suite("A killed recorder's take: what is on disk while it records")
struct KilledRecorderTests {
    /// Records `frames` of a 440 Hz tone at −6 dBFS (mono, 48 kHz) into `type` and returns the
    /// frames written and the frames a copy of the open file reads back, once the writer has
    /// written all `frames` (a whole number of 0.1 s buffers), or after 5 s when it cannot.
    func killed(_ type: AudioFileType, after frames: Int) throws -> (written: Int64, readable: Int) {
        let dir = try TemporaryTestDirectory(prefix: "lockstep-killed")
        let path = dir.file("take.\(type.fileExtension)")
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        try FileFixtures.writeWAV(path: dir.file("tone.wav"),
                                  samples: (0..<frames).map { Float(0.5 * sin(2 * .pi * 440 * Double($0) / 48000)) }, format: format)
        let device = try OfflineDevice(format: format, maximumFramesPerRender: 256)
        let engine = try Engine(device: device, rateConverter: SoxrRateConverter.factory)
        let player = try FilePlayer(path: dir.file("tone.wav"), engine: engine)
        try player.prepare()
        let recorder = try FileRecorder(engine: engine, path: path, channels: 1, encoding: AudioFileEncoding(type: type), source: .mix)
        try recorder.start(at: 0)
        try engine.start([player.queue], at: 0)
        // Rendered no faster than the writer keeps up with (as a device's clock paces it): the
        // recorder's buffers come back to be filled while the render goes on.
        var rendered = 0
        let paced = ContinuousClock.now + .seconds(10)
        while rendered < frames {
            while rendered - Int(recorder.framesWritten) > 14_400 && ContinuousClock.now < paced { usleep(500) }
            _ = try device.renderFloat(frames: min(256, frames - rendered))
            rendered += min(256, frames - rendered)
        }
        // The writer takes the buffers the recorder hands it (every complete one: all but the
        // one being filled).
        let deadline = ContinuousClock.now + .seconds(5)
        while recorder.framesWritten < Int64(frames) && ContinuousClock.now < deadline { usleep(2_000) }
        // Counted before the copy: the file (header included) holds at least this much then.
        let written = recorder.framesWritten
        let snapshot = dir.file("killed.\(type.fileExtension)")
        try FileManager.default.copyItem(atPath: path, toPath: snapshot)
        // The recorder's queue stops on a rendered cycle: render while it stops.
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            _ = try? recorder.stop()
            stopped.signal()
        }.start()
        while stopped.wait(timeout: .now()) == .timedOut { _ = try device.renderFloat(frames: 256) }
        let reader = try? AudioFileReader(path: snapshot, truncation: .tolerate, warnings: FileWarnings())
        return (written, try reader.map { try Helpers.readAll($0).count } ?? 0)
    }

    @Test("a killed WAV take holds all but the buffer being filled: at most 0.1 s (the recorder hands the writer a buffer every 0.1 s)")
    func wavLosesAtMostOneBuffer() throws {
        let frames = 57_600                                                  // 1.2 s: 12 buffers of 0.1 s
        let (written, readable) = try killed(.wav, after: frames)
        // (The header is rewritten just after each buffer: a copy in between holds one less.)
        #expect(readable >= frames - 4800, "\(readable) of \(frames) frames readable (\(written) written)")
    }

    @Test("a killed Opus take holds all but its last 100 ms page and the buffer being filled: at most 0.25 s")
    func opus() throws {
        let frames = 96_000
        let (written, readable) = try killed(.opus, after: frames)
        #expect(readable >= frames - 12_000, "\(readable) of \(frames) frames readable (\(written) written)")
    }

    @Test("a killed Ogg Vorbis take holds every complete page: libsndfile ends a Vorbis page only after 4 KiB of packets or 255 of them, so up to 5.4 s at 48 kHz may be missing")
    func vorbis() throws {
        let frames = 8 * 48000
        let (written, readable) = try killed(.oggVorbis, after: frames)
        // 255 packets of 1024 frames (long blocks at 48 kHz), the encoder's block of lookahead.
        #expect(Int(written) - readable <= 255 * 1024 + 2048, "\(readable) of \(frames) frames readable (\(written) written)")
        #expect(readable > 0)
    }

    @Test("a killed MP3 take reads back all but the last 0.2 s: the recorder writes constant bitrate, whose length a reader can count from the bytes")
    func mp3() throws {
        let frames = 96_000
        let (written, readable) = try killed(.mp3, after: frames)
        #expect(readable >= frames - 9600, "\(readable) of \(frames) frames readable (\(written) written)")
    }
}
