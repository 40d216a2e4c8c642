import AudioQueueCompat
import Foundation
import Testing

@Test func debugRead() throws {
    for path in ["/tmp/s1.wav", "/tmp/s3.caf", "/tmp/s2.aiff"] {
        var file: AudioFileID?
        #expect(AudioFileOpenURL(path, kAudioFileReadPermission, 0, &file) == noErr)
        var asbd = AudioStreamBasicDescription()
        var size = UInt32(40)
        #expect(AudioFileGetProperty(file!, kAudioFilePropertyDataFormat, &size, &asbd) == noErr)
        var bytes = [UInt8](repeating: 0, count: 64)
        var n: UInt32 = 4
        var numBytes: UInt32 = 0
        let s = bytes.withUnsafeMutableBytes { AudioFileReadPackets(file!, false, &numBytes, nil, 0, &n, $0.baseAddress) }
        print(path, asbd, s, n, numBytes, bytes.prefix(Int(numBytes)))
    }
}
