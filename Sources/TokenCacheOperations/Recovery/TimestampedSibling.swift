import Foundation
internal import TokenCache

extension TokenStore {
    /// `DIRECTORY.LABEL-20261124T203000Z`: a name beside the store directory for a copy or the store itself moved
    /// aside, which sorts by time.
    /// When that name is taken (twice in one second), `-2`, `-3`, … is added.
    static func timestampedSibling(of directory: String, label: String, at date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let trimmed = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let name = "\(trimmed).\(label)-\(formatter.string(from: date))"
        var candidate = name
        var counter = 1
        while FileSystem.exists(candidate) || (try? FileManager.default.destinationOfSymbolicLink(atPath: candidate)) != nil {
            counter += 1
            candidate = "\(name)-\(counter)"
        }
        return candidate
    }
}
