import Foundation

/// The seeds of one of the fuzzers' corpora (`Fuzz/corpus/TARGET`, see Scripts/fuzz.sh), for the
/// tests that replay every seed through the target's entry point: each input a fuzzer found a
/// problem with is added there, so each stays a regression test.
public enum FuzzCorpus {
    /// The repository's `Fuzz/corpus`.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus").path

    /// Every seed of `target` (file name and bytes), sorted by name.
    public static func seeds(_ target: String) -> [(name: String, bytes: [UInt8])] {
        let folder = "\(root)/\(target)"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        return names.compactMap { name in FileManager.default.contents(atPath: "\(folder)/\(name)").map { (name, [UInt8]($0)) } }
    }
}
