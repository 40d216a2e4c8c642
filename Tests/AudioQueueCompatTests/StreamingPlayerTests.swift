import AudioQueueCompat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import Lockstep
import LockstepTestSupport
import Testing

/// A streaming player in the idiom of Apple's AudioFileStream sample and the published
/// AudioStreamer: bytes from the network go to `AudioFileStreamParseBytes`; when the stream is
/// ready the property listener makes an output queue of its format with its cookie; the packets
/// callback copies packets into queue buffers and enqueues each full one with its packet
/// descriptions (trimming the packet table's priming and remainder), waiting for a buffer the
/// output callback hands back; the queue starts once every buffer is filled, and at the end of
/// the download the last buffer is enqueued and the queue stopped asynchronously.
final class StreamingPlayer: @unchecked Sendable {
    static let bufferCount = 16
    static let packetsPerBuffer = 4

    let condition = NSCondition()
    var stream: AudioFileStreamID?
    var queue: AudioQueueRef?
    var format = AudioStreamBasicDescription()
    var packetTable: AudioFilePacketTableInfo?
    var buffers: [AudioQueueBufferRef] = []
    var inUse: [Bool] = []
    var fillIndex = 0
    var bytesFilled = 0
    var descriptions: [AudioStreamPacketDescription] = []
    /// Frames of the packets enqueued so far (the packet table's timeline).
    var framesEnqueued: Int64 = 0
    var buffersEnqueued = 0
    var started = false
    var isRunning = false
    var hasRun = false
    var failures: [String] = []
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    static func from(_ pointer: UnsafeMutableRawPointer?) -> StreamingPlayer {
        Unmanaged<StreamingPlayer>.fromOpaque(pointer!).takeUnretainedValue()
    }

    func fail(_ what: String, _ status: OSStatus) {
        if status != noErr { failures.append("\(what): \(status) \(AudioQueueCompatLastErrorMessage() ?? "")") }
    }

    /// The stream is ready: the queue, its cookie, its buffers. Called from the parser.
    func makeQueue() {
        guard let stream else { return }
        var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        fail("DataFormat", AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataFormat, &size, &format))
        var table = AudioFilePacketTableInfo()
        size = UInt32(MemoryLayout<AudioFilePacketTableInfo>.size)
        if AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_PacketTableInfo, &size, &table) == noErr { packetTable = table }
        fail("AudioQueueNewOutput", AudioQueueNewOutput(&format, streamingOutput, pointer, nil, nil, 0, &queue))
        guard let queue else { return }
        fail("AddPropertyListener", AudioQueueAddPropertyListener(queue, kAudioQueueProperty_IsRunning, streamingRunning, pointer))
        var cookieSize: UInt32 = 0
        if AudioFileStreamGetPropertyInfo(stream, kAudioFileStreamProperty_MagicCookieData, &cookieSize, nil) == noErr, cookieSize > 0 {
            var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
            fail("MagicCookieData", AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_MagicCookieData, &cookieSize, &cookie))
            fail("SetProperty(MagicCookie)", AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, cookie, cookieSize))
        }
        var upperBound: UInt32 = 0
        size = 4
        fail("PacketSizeUpperBound", AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_PacketSizeUpperBound, &size, &upperBound))
        for _ in 0..<Self.bufferCount {
            var buffer: AudioQueueBufferRef?
            fail("AllocateBuffer", AudioQueueAllocateBuffer(queue, upperBound * UInt32(Self.packetsPerBuffer), &buffer))
            if let buffer { buffers.append(buffer) }
        }
        inUse = [Bool](repeating: false, count: buffers.count)
    }

    /// Packets from the parser: into the current buffer, enqueueing it when the next does not fit.
    func take(_ count: Int, _ data: UnsafeRawPointer, _ packetDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) {
        guard !buffers.isEmpty, let packetDescriptions else { return }
        for index in 0..<count {
            let packet = packetDescriptions[index]
            let size = Int(packet.mDataByteSize)
            if bytesFilled + size > Int(buffers[fillIndex].pointee.mAudioDataBytesCapacity) || descriptions.count == Self.packetsPerBuffer {
                enqueueBuffer()
            }
            buffers[fillIndex].pointee.mAudioData.advanced(by: bytesFilled).copyMemory(from: data + Int(packet.mStartOffset), byteCount: size)
            descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(bytesFilled), mVariableFramesInPacket: packet.mVariableFramesInPacket,
                                                             mDataByteSize: packet.mDataByteSize))
            bytesFilled += size
        }
    }

    /// Enqueues the buffer being filled (trimmed to the packet table's valid frames), starts the
    /// queue once every buffer is in it, and waits until the next buffer is free.
    func enqueueBuffer() {
        guard let queue, !descriptions.isEmpty else { return }
        let buffer = buffers[fillIndex]
        buffer.pointee.mAudioDataByteSize = UInt32(bytesFilled)
        let framesPerPacket = Int64(format.mFramesPerPacket)
        let first = framesEnqueued, end = framesEnqueued + Int64(descriptions.count) * framesPerPacket
        var trimStart: UInt32 = 0, trimEnd: UInt32 = 0
        if let table = packetTable {
            let validEnd = Int64(table.mPrimingFrames) + table.mNumberValidFrames
            trimStart = UInt32(max(0, min(Int64(table.mPrimingFrames), end) - first))
            trimEnd = UInt32(max(0, end - max(validEnd, first)))
        }
        condition.lock()
        inUse[fillIndex] = true
        condition.unlock()
        fail("EnqueueBuffer", AudioQueueEnqueueBufferWithParameters(queue, buffer, UInt32(descriptions.count), descriptions,
                                                                    trimStart, trimEnd, 0, nil, nil, nil))
        framesEnqueued = end
        buffersEnqueued += 1
        if !started && buffersEnqueued == buffers.count { start() }
        fillIndex = (fillIndex + 1) % buffers.count
        bytesFilled = 0
        descriptions.removeAll(keepingCapacity: true)
        condition.lock()
        while inUse[fillIndex] { condition.wait() }
        condition.unlock()
    }

    func start() {
        started = true
        fail("AudioQueueStart", AudioQueueStart(queue!, nil))
    }

    /// The download ended: the last buffer, then a stop once everything enqueued has played.
    func finish() {
        enqueueBuffer()
        guard let queue else { return }
        if !started { start() }
        fail("AudioQueueFlush", AudioQueueFlush(queue))
        fail("AudioQueueStop", AudioQueueStop(queue, false))
    }

    /// A buffer came back from the queue.
    func handBack(_ buffer: AudioQueueBufferRef) {
        condition.lock()
        if let index = buffers.firstIndex(of: buffer) { inUse[index] = false }
        condition.broadcast()
        condition.unlock()
    }

    var hasFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return hasRun && !isRunning
    }
}

func streamingProperty(_ client: UnsafeMutableRawPointer, _ stream: AudioFileStreamID, _ id: AudioFileStreamPropertyID,
                       _ flags: UnsafeMutablePointer<AudioFileStreamPropertyFlags>) {
    if id == kAudioFileStreamProperty_ReadyToProducePackets { StreamingPlayer.from(client).makeQueue() }
}

func streamingPackets(_ client: UnsafeMutableRawPointer, _ bytes: UInt32, _ count: UInt32, _ data: UnsafeRawPointer,
                      _ descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) {
    StreamingPlayer.from(client).take(Int(count), data, descriptions)
}

func streamingOutput(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef) {
    StreamingPlayer.from(userData).handBack(buffer)
}

func streamingRunning(_ userData: UnsafeMutableRawPointer?, _ queue: AudioQueueRef, _ id: AudioQueuePropertyID) {
    let player = StreamingPlayer.from(userData)
    var running: UInt32 = 0
    var size: UInt32 = 4
    AudioQueueGetProperty(queue, kAudioQueueProperty_IsRunning, &running, &size)
    player.condition.lock()
    player.isRunning = running != 0
    if running != 0 { player.hasRun = true }
    player.condition.unlock()
}

/// URLSession's data as it arrives, handed to the parser (the delegate of a streaming player).
final class StreamingDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let player: StreamingPlayer
    let done = DispatchSemaphore(value: 0)
    var parseStatus: OSStatus = noErr
    var error: Error?
    var bytesReceived = 0
    var pieces = 0

    init(player: StreamingPlayer) { self.player = player }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        bytesReceived += data.count
        pieces += 1
        guard parseStatus == noErr, let stream = player.stream else { return }
        parseStatus = data.withUnsafeBytes { AudioFileStreamParseBytes(stream, UInt32($0.count), $0.baseAddress, []) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        self.error = error
        done.signal()
    }
}

extension AQCompatTests {
    /// A streaming player fed over HTTP on loopback (a python3 http.server the test starts and
    /// stops) plays an MP3 and an ADTS stream on a live (threaded) device: every valid frame,
    /// exactly the file reader's decode, nothing more.
    @Suite("Streaming player over HTTP", .serialized)
    struct StreamingPlayerTests {
        let fixtures = CompressedFixtures.shared

        func streamAndCheck(_ path: String, hint: AudioFileTypeID) throws {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            let server = try StaticHTTPServer(directory: directory)
            defer { server.stop() }
            let device = ThreadedTestDevice(sampleRate: 44100, channels: 2, period: 256, speed: 2)
            let engine = try Engine(device: device)
            AudioQueueSetDefaultDevice(.engine(engine))
            defer {
                AudioQueueSetDefaultDevice(.standard)
                device.stop()
            }
            let player = StreamingPlayer()
            try #require(AudioFileStreamOpen(player.pointer, streamingProperty, streamingPackets, hint, &player.stream) == noErr)
            let download = StreamingDownload(player: player)
            let session = URLSession(configuration: .ephemeral, delegate: download, delegateQueue: nil)
            defer { session.invalidateAndCancel() }
            session.dataTask(with: server.url(URL(fileURLWithPath: path).lastPathComponent)).resume()
            #expect(download.done.wait(timeout: .now() + 30) == .success, "the download did not end")
            #expect(download.error == nil && download.parseStatus == noErr, "\(String(describing: download.error)) \(download.parseStatus)")
            player.finish()
            #expect(ThreadedTestDevice.wait(timeout: 20) { player.hasFinished }, "the queue did not play out")
            let rendered = device.output.count                  // a few periods of silence after it
            #expect(ThreadedTestDevice.wait(timeout: 5) { device.output.count >= rendered + 4096 })
            let output = device.output
            device.stop()
            #expect(player.failures.isEmpty, "\(player.failures)")
            if let queue = player.queue { #expect(AudioQueueDispose(queue, true) == noErr) }
            #expect(AudioFileStreamClose(player.stream!) == noErr)

            // What the file reader decodes: the valid frames.
            let (status, bytes) = try extReadAll(path, client: floatClient44, chunk: 4096)
            try #require(status == noErr)
            let expected = floats(bytes)
            // Where the played audio begins on the device (its first sound) and ends.
            let firstExpected = try #require(expected.firstIndex { $0 != 0 }) / 2
            let firstHeard = try #require(output.firstIndex { $0 != 0 }) / 2
            let start = firstHeard - firstExpected
            let frames = expected.count / 2
            let lastHeard = (output.lastIndex { $0 != 0 } ?? 0) / 2
            let lastExpected = (expected.lastIndex { $0 != 0 } ?? 0) / 2
            print("streamed \(URL(fileURLWithPath: path).lastPathComponent) over HTTP: \(download.bytesReceived) bytes in \(download.pieces) pieces, "
                  + "\(player.buffersEnqueued) buffers; heard frames \(start)…\(lastHeard - lastExpected + frames - 1) on the device, \(frames) valid frames in the file")
            try #require(start >= 0 && (start + frames) * 2 <= output.count, "start \(start), \(output.count / 2) frames rendered")
            let played = Array(output[(start * 2)..<((start + frames) * 2)])
            let differing = played.indices.filter { played[$0] != expected[$0] }
            #expect(differing.isEmpty, "\(differing.count) samples differ, first at frame \((differing.first ?? 0) / 2)")
            // Nothing after the valid frames: the file's last sound is the device's last.
            #expect(lastHeard - start == lastExpected, "\(lastHeard - start - lastExpected) frames more (or fewer) heard at the end")
        }

        @Test("an MP3 stream over HTTP: every valid frame (LAME's priming and padding trimmed) played, equal to the file reader's decode")
        func mp3() throws { try streamAndCheck(try fixtures.mp3, hint: kAudioFileMP3Type) }

        @Test("an ADTS AAC stream over HTTP: every frame played, equal to the file reader's decode")
        func adts() throws { try streamAndCheck(try fixtures.adts, hint: kAudioFileAAC_ADTSType) }
    }
}
