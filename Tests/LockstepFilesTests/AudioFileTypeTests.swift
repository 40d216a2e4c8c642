import Lockstep
import LockstepFiles
import Testing

@Suite("AudioFileType")
struct AudioFileTypeTests {
    @Test("extensions map to types, ignoring case", arguments: [
        ("wav", AudioFileType.wav), ("WAVE", .wav), ("aif", .aiff), ("AIFF", .aiff), ("aifc", .aiff),
        ("flac", .flac), ("Caf", .caf), ("w64", .w64), ("RF64", .rf64), ("ogg", .oggVorbis),
        ("oga", .oggVorbis), ("opus", .opus), ("MP3", .mp3),
    ])
    func extensions(ext: String, type: AudioFileType) {
        #expect(AudioFileType(pathExtension: ext) == type)
        #expect(AudioFileType(path: "/some/dir/song.\(ext)") == type)
    }

    @Test("unknown extensions are rejected")
    func unknownExtensions() {
        #expect(AudioFileType(pathExtension: "txt") == nil)
        #expect(AudioFileType(pathExtension: "") == nil)
        #expect(AudioFileType(path: "/dir.wav/noextension") == nil)
        #expect(AudioFileType(path: ".wav") == nil)
    }

    @Test("writable types and their sample formats")
    func writability() {
        #expect(AudioFileType.writableTypes == AudioFileType.allCases)
        #expect(Array(AudioFileType.writableTypes.prefix(10)) == [.wav, .aiff, .flac, .caf, .w64, .rf64, .oggVorbis, .opus, .mp3, .au])
        #expect(AudioFileType.mp3.isWritable && AudioFileType.opus.isWritable && AudioFileType.oggVorbis.isWritable)
        #expect(AudioFileType.flac.writableSampleFormats == [.int16, .int24])
        #expect(AudioFileType.flac.defaultSampleFormat == .int24)
        #expect(AudioFileType.wav.defaultSampleFormat == .float32)
        for type in AudioFileType.writableTypes {
            if let format = type.defaultFileSampleFormat {
                #expect((try? type.libsndfileFormat(forFileSampleFormat: format)) != nil, "\(type)")
            } else {
                #expect((try? type.libsndfileFormat(for: type.defaultSampleFormat)) != nil, "\(type)")
            }
        }
        #expect(AudioFileType.wve.defaultFileSampleFormat == .alaw && AudioFileType.xi.defaultFileSampleFormat == .dpcm16)
    }

    @Test("format words combine major type and subtype")
    func formatWords() throws {
        #expect(try AudioFileType.wav.libsndfileFormat(for: .int16) == 0x010002)
        #expect(try AudioFileType.aiff.libsndfileFormat(for: .int24) == 0x020003)
        #expect(try AudioFileType.caf.libsndfileFormat(for: .float32) == 0x180006)
        #expect(try AudioFileType.flac.libsndfileFormat(for: .int16) == 0x170002)
        #expect(try AudioFileType.rf64.libsndfileFormat(for: .int32) == 0x220004)
        #expect(try AudioFileType.w64.libsndfileFormat(for: .float64) == 0x0B0007)
        #expect(AudioFileType.wav.majorFormat == 0x010000)
        #expect(AudioFileType(libsndfileFormat: 0x200064) == .opus)
        #expect(AudioFileType(libsndfileFormat: 0x200060) == .oggVorbis)
        #expect(AudioFileType(libsndfileFormat: 0x130002) == .wav)
        #expect(AudioFileType(libsndfileFormat: 0x030002) == .au)
        #expect(AudioFileType(libsndfileFormat: 0x040002) == .raw)
        #expect(AudioFileType(libsndfileFormat: 0x160002) == nil, "Sound Designer II is not offered")
        #expect(AudioFileType(libsndfileFormat: 0x230081) == nil, "MPEG Layer II is not written by libsndfile 1.2")
    }

    @Test("FLAC refuses floats and 32-bit integers, suggesting s24", arguments: [SampleFormat.float32, .int32, .float64])
    func flacRefusesWideFormats(format: SampleFormat) {
        let error = #expect(throws: FileError.self) {
            try AudioFileType.flac.libsndfileFormat(for: format, path: "mix.flac")
        }
        #expect(error?.kind == .unsupportedOutputFormat)
        #expect(error?.path == "mix.flac")
        #expect(error?.message.hasPrefix("mix.flac: FLAC cannot store \(format.rawValue)") == true)
        #expect(error?.message.contains("s24") == true)
    }

    @Test("a lossy codec takes no sample format: the queue format is ignored, a file sample format refused")
    func lossyFormat() throws {
        #expect(try AudioFileType.mp3.libsndfileFormat(for: SampleFormat.int16) == 0x230082)
        let error = #expect(throws: FileError.self) { try AudioFileType.mp3.libsndfileFormat(forFileSampleFormat: .int16, path: "x.mp3") }
        #expect(error?.kind == .unsupportedOutputFormat)
        #expect(error?.message == "x.mp3: MP3 holds no sample format choice (the codec chooses its own); leave --sample-format out")
    }

    @Test("forOutput picks writable types from the extension")
    func forOutput() throws {
        #expect(try AudioFileType.forOutput(path: "out/Mix.WAV") == .wav)
        #expect(try AudioFileType.forOutput(path: "a.aifc") == .aiff)
        #expect(try AudioFileType.forOutput(path: "a.rf64") == .rf64)
        #expect(try AudioFileType.forOutput(path: "a.mp3") == .mp3)
        #expect(try AudioFileType.forOutput(path: "a.OPUS") == .opus)
        #expect(try AudioFileType.forOutput(path: "a.oga") == .oggVorbis)
        #expect(try AudioFileType.forOutput(path: "a.snd") == .au)
    }

    @Test("forOutput explains unknown and missing extensions", arguments: ["song.txt", "song", "song.m4a"])
    func forOutputErrors(path: String) {
        let error = #expect(throws: FileError.self) { try AudioFileType.forOutput(path: path) }
        #expect(error?.kind == .unsupportedOutputFormat)
        #expect(error?.path == path)
        #expect(error?.message.hasPrefix(path + ": ") == true)
        for ext in [".wav", ".aiff", ".flac", ".caf", ".w64", ".rf64", ".au", ".ogg", ".opus", ".mp3"] {
            #expect(error?.message.contains(ext) == true)
        }
    }
}
