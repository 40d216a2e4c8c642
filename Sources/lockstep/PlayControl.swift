import Foundation
import LockstepFiles
import LockstepSession
import Yams

/// `play` with a control surface (`--control`, `--osc`, `--osc-tcp`, `--midi`): the files become
/// a session — one layer per file, named after it, with one cue that starts at the file's
/// `--offset` — and run the way `session run` runs one, so every command (pause, resume, seek,
/// stop, panic, layer gains, cue levels, status) goes through the same dispatcher.
enum PlayControl {
    /// The layer (and cue) name of each file: its name without the extension, made unique with
    /// `-2`, `-3`… in file order.
    static func layerNames(_ files: [String]) -> [String] {
        var taken: Set<String> = []
        return files.map { path in
            let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let base = stem.isEmpty ? "layer" : stem
            var name = base
            var next = 2
            while taken.contains(name) {
                name = "\(base)-\(next)"
                next += 1
            }
            taken.insert(name)
            return name
        }
    }

    /// The session text (YAML, written by Yams) that plays `layers` as `play` plays them: every
    /// file from the common start plus its offset, at its gain, through its channel map, looped
    /// forever with `loop`. MIDI Show Control STOP pauses, RESUME resumes and ALL_OFF stops it.
    static func sessionText(layers: LayerArguments, loop: Bool) throws -> String {
        let names = layerNames(layers.files)
        var layerMap: [String: [String: String]] = [:]
        var cues: [[String: String]] = []
        for (index, path) in layers.files.enumerated() {
            let name = names[index]
            var layer = ["gain": layers.gains[index] == -.infinity ? "-inf" : "\(layers.gains[index])dB"]
            if index < layers.channelMaps.count, let map = layers.channelMaps[index] { layer["channel_map"] = map.text }
            layerMap[name] = layer
            var cue = ["name": name, "layer": name, "file": URL(fileURLWithPath: path).standardizedFileURL.path,
                       "at": "\(layers.offsets[index])"]
            if loop { cue["loop"] = "forever" }
            cues.append(cue)
        }
        let triggers: [[String: String]] = [["msc": "stop"], ["msc": "resume"], ["msc": "all_off"]]
        // Layers in file order: Yams writes a dictionary's keys sorted, so each is its own mapping.
        var text = try Yams.dump(object: ["channels": 2]) + "layers:\n"
        for name in names {
            text += try Yams.dump(object: [name: layerMap[name]!]).split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? "" : "  \($0)" }.joined(separator: "\n")
        }
        text += try Yams.dump(object: ["cues": cues, "triggers": triggers])
        return text
    }

    /// The session `play` runs with a control surface.
    /// - Throws: ``CLIError`` when a file cannot be played as a session cue.
    static func session(layers: LayerArguments, loop: Bool) throws -> Session {
        if layers.files.contains(where: StandardStreams.names) {
            throw CLIError(message: "play: '-' (standard input) cannot be played with --control, --osc, --osc-tcp, --midi, --ltc-out or --mtc-out: a session seeks in its files; save the stream to a file first (sox … out.wav) and play that", exitCode: 64)
        }
        let text = try sessionText(layers: layers, loop: loop)
        do {
            return try Session.parse(text: text, path: "play")
        } catch {
            throw CLIError(message: "play: the files cannot be played under control:\n"
                           + error.diagnostics.map { "  \($0.message)" }.joined(separator: "\n"))
        }
    }
}
