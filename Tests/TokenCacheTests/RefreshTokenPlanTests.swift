import Testing

@testable import TokenCache

@Suite struct RefreshTokenPlanTests {
    @Test(arguments: [
        // No app metadata: family status unknown, try family "1" first.
        (false, String?.none, RefreshTokenPlan.familyThenOwn(familyID: "1")),
        (false, "", .familyThenOwn(familyID: "1")),
        (false, "1", .familyThenOwn(familyID: "1")),
        // App metadata without a family: own refresh token only.
        (true, nil, .ownOnly),
        (true, "", .ownOnly),
        // Known member.
        (true, "1", .familyThenOwn(familyID: "1")),
        (true, "2", .familyThenOwn(familyID: "2")),
    ] as [(Bool, String?, RefreshTokenPlan)])
    func planFollowsAppMetadata(exists: Bool, familyID: String?, expected: RefreshTokenPlan) {
        #expect(RefreshTokenPlan.plan(appMetadataExists: exists, familyID: familyID) == expected)
    }

    @Test func theOnlyFamilyIsOne() {
        #expect(RefreshTokenPlan.theOnlyFamilyID == "1")
        #expect(RefreshTokenPlan.familyThenOwn(familyID: "1") != .ownOnly)
    }
}
