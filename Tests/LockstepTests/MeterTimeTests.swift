import Lockstep
import LockstepTestSupport
import Testing

@Suite("Level readings carry the sample time of their window")
struct MeterTimeTests {
    @Test("queue and master readings tile the timeline; a level step shows in exactly the windows after it")
    func readingsAreTimed() throws {
        let h = try OfflineHarness(channels: 1, period: 256)
        let q = try h.engine.makeOutputQueue(format: StreamFormat(sampleRate: 48000, channelCount: 1), name: "a") { _, _ in }
        q.isLevelMeteringEnabled = true
        h.engine.isMasterMeteringEnabled = true
        let step: Int64 = 1000 + 3000                     // device time of the first loud frame
        try q.enqueueSamples(Signals.constant(0, frames: 3000) + Signals.constant(0.5, frames: 9000))
        try h.engine.start([q], at: 1000)
        var queueReadings: [LevelReading] = []
        var masterReadings: [LevelReading] = []
        for _ in 0..<60 {
            _ = try h.render(frames: 256)
            let r = try q.currentLevelReading()
            if r.frames > 0 && r != queueReadings.last { queueReadings.append(r) }
            let m = h.engine.masterLevelReading
            if m.frames > 0 && m != masterReadings.last { masterReadings.append(m) }
        }
        #expect(queueReadings.count >= 4)
        #expect(masterReadings.count >= 4)
        for readings in [queueReadings, masterReadings] {
            for (a, b) in zip(readings, readings.dropFirst()) {
                #expect(b.sampleTime == a.sampleTime + Int64(a.frames), "windows must tile: \(a) then \(b)")
            }
            for r in readings {
                let end = r.sampleTime + Int64(r.frames)
                #expect(end <= 60 * 256)
                let peak = r.levels[0].peakPower
                if end <= step { #expect(peak == 0, "\(r)") }
                if r.sampleTime >= step && end <= 1000 + 12000 { #expect(peak == 0.5 && r.levels[0].averagePower == 0.5, "\(r)") }
                if r.sampleTime < step && end > step { #expect(peak == 0.5 && r.levels[0].averagePower < 0.5, "\(r)") }
            }
        }
        // The queue's meter starts with the queue; the master meter with the device.
        #expect(queueReadings.first?.sampleTime == 1000)
        #expect(masterReadings.first?.sampleTime == 0)
    }
}
