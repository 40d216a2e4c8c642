// LayeredRender: the Lockstep API in one page.
//
// Plays three files at three different sample rates as layers of one engine, starts them on one
// device sample time, renders the mix offline through the same render path a live device uses,
// and writes it to a file.
//
//   swift run LayeredRender [OUT.wav]
import Foundation
import Lockstep
import LockstepFiles

let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../Layers").standardized.path
let outputPath = CommandLine.arguments.dropFirst().first ?? "layered-example.wav"

do {
    // 1. A device and an engine. The offline device renders as fast as asked; the rate converter
    //    lets queues at other rates play on it.
    let format = StreamFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .float32)
    let device = try OfflineDevice(format: format, maximumFramesPerRender: 1024)
    let engine = try Engine(device: device)

    // 2. One output queue per layer, each fed by a file player (buffers recycled through the
    //    queue's callback, exactly like Audio Queue's playback callback).
    var players: [FilePlayer] = []
    for (file, gain) in [("drums.wav", -3.0), ("bass.flac", -2.0), ("pad.aiff", -9.0)] {
        let player = try FilePlayer(path: "\(folder)/\(file)", engine: engine)
        try player.queue.setMixerGain(decibels: gain)
        player.queue.isLevelMeteringEnabled = true
        try player.prepare()          // fill and enqueue the first buffers: start is instant
        players.append(player)
    }

    // 3. Start every layer's first frame on the same device sample time.
    let startTime = try engine.start(players.map(\.queue), at: 0)
    print("started \(players.count) layers at device sample \(startTime)")

    // 4. Render until every queue has played out, writing the mix.
    let writer = try AudioFileWriter(path: outputPath, format: format)
    var block = [Float](repeating: 0, count: 1024 * 2)
    while players.contains(where: { $0.queue.isRunning || !$0.hasEnqueuedEverything }) {
        try block.withUnsafeMutableBytes { _ = try device.render(frames: 1024, into: $0) }
        try block.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 1024) }
    }
    try writer.close()

    for player in players {
        print("\(player.queue.name): \(player.fileFormat), mixer gain \(player.queue.mixerGainDB) dB")
    }
    print("wrote \(writer.framesWritten) frames to \(outputPath); discontinuities: \(engine.discontinuities.count)")
} catch {
    FileHandle.standardError.write(Data("LayeredRender: \(error)\n".utf8))
    exit(1)
}
