@testable import LockstepFiles
import Testing

@Suite("Path helpers")
struct PathTests {
    @Test("folder, file name and extension of a path", arguments: [
        ("song.wav", ".", "song.wav", "wav"),
        ("/a/b/song.Final.FLAC", "/a/b", "song.Final.FLAC", "FLAC"),
        ("/song.wav", "/", "song.wav", "wav"),
        ("dir/.hidden", "dir", ".hidden", ""),
        ("dir.d/noext", "dir.d", "noext", ""),
    ])
    func components(path: String, folder: String, name: String, ext: String) {
        #expect(FileSystem.directory(of: path) == folder)
        #expect(FileSystem.fileName(of: path) == name)
        #expect(FileSystem.pathExtension(of: path) == ext)
    }

    @Test("FileError messages name the file unless there is none")
    func messages() {
        #expect(FileError(.ioError, path: "a.wav", problem: "x").message == "a.wav: x")
        #expect(FileError(.ioError, path: "", problem: "x").description == "x")
    }
}
