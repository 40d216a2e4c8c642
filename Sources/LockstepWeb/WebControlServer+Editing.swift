import Foundation
import LockstepControl
import LockstepSchema

/// Editing as a right of its own (``WebControlServer/Options/editToken``): the edit URL, and
/// whether a request carries the edit token.
extension WebControlServer {
    /// The page's address with the edit token (nil without ``Options/editToken``).
    public var editURL: String? {
        guard let edit = options.editToken?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) else { return nil }
        return url + (options.token == nil ? "?" : "&") + "edit=" + edit
    }

    /// Whether a request for `target` may edit the show: there is no edit token, or it carries it
    /// (`edit=…`).
    func mayEdit(target: String) -> Bool {
        guard let editToken = options.editToken else { return true }
        var presented = ""
        if let query = target.split(separator: "?", maxSplits: 1).dropFirst().first {
            for pair in query.split(separator: "&") where pair.hasPrefix("edit=") {
                let value = pair.dropFirst(5)
                presented = String(value).removingPercentEncoding ?? String(value)
            }
        }
        return WebAdmission.constantTimeEqual(editToken, presented)
    }

    /// The audio files of the media folder (the session file's folder), relative to it, sorted:
    /// what the editor offers for a cue's `file`. At most ``maximumMediaFiles``, four folders deep;
    /// hidden files and folders left out.
    static func mediaFiles(in folder: String) -> [String] {
        let root = URL(fileURLWithPath: folder).standardizedFileURL
        guard let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey],
                                                        options: [.skipsHiddenFiles, .skipsPackageDescendants]) else { return [] }
        var files: [String] = []
        let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
        while let url = walk.nextObject() as? URL {
            if walk.level > 4 { walk.skipDescendants(); continue }
            guard mediaExtensions.contains(url.pathExtension.lowercased()),
                  (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let path = url.standardizedFileURL.path
            if path.hasPrefix(prefix) { files.append(String(path.dropFirst(prefix.count))) }
            if files.count >= maximumMediaFiles { break }
        }
        return files.sorted()
    }

    /// The most files ``mediaFiles(in:)`` lists.
    static let maximumMediaFiles = 5000

    /// The extensions of the audio files the media folder lists (what libsndfile and FFmpeg read).
    static let mediaExtensions: Set<String> = ["wav", "wave", "bwf", "flac", "aif", "aiff", "aifc", "ogg", "oga", "opus",
                                               "mp3", "m4a", "aac", "caf", "w64", "rf64", "au", "snd", "mp4", "mka", "webm"]

    /// Why `command` may not run from the page: a cue's `file` named outside the media folder
    /// (`folder`), absolute, or not one of its files; nil when it may. Touches neither the folder
    /// nor the file system for a command that names no file (a GO's path stays short).
    static func mediaRefusal(_ command: ControlCommand, folder: @autoclosure () -> String) -> String? {
        guard case .restructure(let change) = command else { return nil }
        let files: [String]
        switch change {
        case .set(_, let changes): files = changes.filter { $0.key == "file" }.compactMap(\.value)
        case .add(let values, _): files = values.filter { $0.key == "file" }.map(\.value)
        default: return nil
        }
        guard !files.isEmpty else { return nil }
        let folder = folder()
        let root = URL(fileURLWithPath: folder).standardizedFileURL.resolvingSymlinksInPath().path
        for file in files {
            let resolved = URL(fileURLWithPath: file, relativeTo: URL(fileURLWithPath: folder, isDirectory: true))
                .standardizedFileURL.resolvingSymlinksInPath().path
            if file.hasPrefix("/") || file.hasPrefix("~") || !resolved.hasPrefix(root + "/") {
                return "file: '\(file)' is not in the session's media folder (\(folder)); choose one of its files (GET /api/media lists them)"
            }
            var isFolder: ObjCBool = false
            if !FileManager.default.fileExists(atPath: resolved, isDirectory: &isFolder) || isFolder.boolValue {
                return "file: '\(file)' is not a file of the session's media folder (\(folder)); choose one of its files (GET /api/media lists them)"
            }
        }
        return nil
    }
}

/// The media folder's audio files (`GET /api/media`, for who may edit).
public struct WebMediaList: Sendable, Hashable, Codable {
    /// The folder (the session file's), absolute.
    public var folder: String
    /// Its audio files, relative to it.
    public var files: [String]
    /// The audio input ports a layer's `ports` may name (the JACK graph's, not Lockstep's own).
    public var ports: [String] = []

    /// As one line of JSON.
    public var json: String { ControlJSON.line(self) }
}
