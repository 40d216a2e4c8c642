import LockstepFiles
import Testing

@Suite("FilePlayer.Buffering: queued audio of many layers within a memory budget")
struct FilePlayerBufferingTests {
    /// Bytes a second of one stereo 48 kHz layer as its queue holds it (32-bit float).
    let stereo48k = 48000.0 * 2 * 4

    @Test("few layers keep six buffers of 0.25 s; 4096 stereo layers four of 0.128 s, within 768 MiB")
    func budget() {
        #expect(FilePlayer.Buffering(layersBytesPerSecond: stereo48k * 8) == .init(count: 6, seconds: 0.25))
        // The largest count of stereo layers whose six 0.25 s buffers fit: 1398 (1398 × 576 000 B ≤ 768 MiB).
        #expect(FilePlayer.Buffering(layersBytesPerSecond: stereo48k * 1398).count == 6)
        let many = FilePlayer.Buffering(layersBytesPerSecond: stereo48k * 4096)
        #expect(many.count == 4)
        #expect(abs(many.seconds - 0.128) < 0.001)
        #expect(Double(many.count) * many.seconds * stereo48k * 4096 <= FilePlayer.Buffering.budget + 1)
        // Never shorter than 0.1 s, however many layers.
        #expect(FilePlayer.Buffering(layersBytesPerSecond: stereo48k * 100_000).seconds == 0.1)
    }
}

extension FilePlayer.Buffering {
    init(count: Int, seconds: Double) {
        self.init(layersBytesPerSecond: 0)
        self.count = count
        self.seconds = seconds
    }
}
