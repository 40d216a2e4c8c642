import Foundation
import Lockstep
import LockstepFiles

/// Where each input is written: libsndfile reads files, and AudioFileReader has no virtual I/O,
/// so the bytes go to one file (in /dev/shm when there is one), rewritten for every input and
/// removed when the fuzzer exits.
let inputPath: String = {
    let folder = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
    atexit { try? FileManager.default.removeItem(atPath: inputPath) }
    return folder + "lockstep-audio-fuzz-\(getpid()).bin"
}()

/// The most frames one input reads (a header may declare far more than the file holds).
let frameBudget = 1 << 20

/// One input: its bytes as an audio file, opened the way Lockstep opens files — tolerating a
/// truncated file (`lockstep play`, `info`) and rejecting one (`session check`) — then read in
/// blocks as floats, 32-bit integers and doubles, sought into and scanned for its peak. Anything but
/// a ``FileError`` for a bad file — a trap, a hang, a leak, memory out of bounds — is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func audioFileFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Data(bytes: $0, count: size) } ?? Data()
    guard FileManager.default.createFile(atPath: inputPath, contents: bytes) else {
        fatalError("the audio fuzzer cannot write \(inputPath)")
    }
    for policy in [AudioFileReader.TruncationPolicy.tolerate, .reject] {
        guard let reader = try? AudioFileReader(path: inputPath, truncation: policy) else { continue }
        defer { reader.close() }
        _ = reader.formatDescription
        _ = reader.duration
        let channels = reader.format.channelCount
        precondition(channels >= 1 && reader.format.sampleRate >= 1, "a reader with \(channels) channels at \(reader.format.sampleRate) Hz")
        let block = 1024
        var floats = [Float](repeating: 0, count: block * channels)
        var integers = [Int32](repeating: 0, count: block * channels)
        var doubles = [Double](repeating: 0, count: block * channels)
        var read = 0
        reading: while read < frameBudget {
            let got: Int
            do {
                switch (read / block) % 3 {
                case 0: got = try floats.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: block) }
                case 1: got = try integers.withUnsafeMutableBufferPointer { try reader.read(int32Samples: $0.baseAddress!, frames: block) }
                default: got = try doubles.withUnsafeMutableBufferPointer { try reader.read(doubleSamples: $0.baseAddress!, frames: block) }
                }
            } catch {
                break reading
            }
            precondition(got >= 0 && got <= block, "read returned \(got) frames for a block of \(block)")
            if got == 0 { break }
            read += got
        }
        if reader.frameCount > 0 {
            try? reader.seek(toFrame: reader.frameCount / 2)
            _ = try? floats.withUnsafeMutableBufferPointer { try reader.read(into: $0.baseAddress!, frames: block) }
        }
        if reader.frameCount <= Int64(frameBudget) { _ = try? reader.scanPeak() }
    }
    return 0
}
