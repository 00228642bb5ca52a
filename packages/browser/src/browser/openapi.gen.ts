/**
 * The request bodies and success answers of the routes the proxy client calls, generated from the
 * proxy's OpenAPI document (the route tables' schemas, as `GET /openapi.json` serves them) by
 * `npm run gen:sdk-types` (scripts/gen-sdk-types.ts). Do not edit: test/sdk-route-types.test.ts
 * fails when this file and the route tables differ.
 *
 * @module
 */
export interface paths {
    "/api/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** login with credentials, optional second factor and captcha; then loads the profile and sets the session cookie */
        post: operations["postAuthLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/register": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** registration (RegisterSimplifiedPayload, spec 2.4); REGISTER_TYPE or a social `provider` chooses the upstream */
        post: operations["postAuthRegister"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** logout; always answers 200 and clears the session cookie */
        post: operations["postAuthLogout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/logout-auto": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** automatic logout after session expiry; always answers 200 and clears the session cookie */
        post: operations["postAuthLogoutAuto"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the session state from the cookie alone, never upstream: `{ signedIn: true, expiresAt }` (epoch seconds of the token's `exp`) or `{ signedIn: false }`; a refused cookie is cleared */
        get: operations["getAuthSession"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** profile, cached 10 s per token or fetched; `check_spa_again=1` fetches afresh */
        get: operations["getAuthProfile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/recheck-spa": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** revalidate the session after in-app navigation */
        post: operations["postAuthRecheckSpa"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** renew the JWT: sets a new session cookie and answers { ok: true } */
        post: operations["postAuthRefresh"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/recovery": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** multi-step password recovery: a ForgotPasswordPayload `{ login, captcha_token? }` without `step` starts it (reset/options); the later steps name theirs (`step`: by-email, by-sms, validate-code, confirm), each with only its own fields */
        post: operations["postAuthRecovery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/social/{provider}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** social login: the provider token is exchanged for a session */
        post: operations["postAuthSocialByProvider"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/validate-document": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** validate a national document before registration (ValidateDocumentPayload → ValidateDocumentResponse) */
        post: operations["postAuthValidateDocument"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/logs/auth-logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** forced-logout beacon (spec 6.1): a warn-level `forced-logout` log entry sampled at 50%; answers 204 */
        post: operations["postLogsAuthLogout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/validation/email/send": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** send e-mail verification code */
        post: operations["postValidationEmailSend"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/validation/email/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** verify e-mail code (`code`) */
        post: operations["postValidationEmailVerify"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/validation/email/change": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** change user e-mail (`email`) */
        patch: operations["patchValidationEmailChange"];
        trace?: never;
    };
    "/api/validation/sms/send": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** send SMS code */
        post: operations["postValidationSmsSend"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/validation/sms/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** verify SMS code (`code`) */
        post: operations["postValidationSmsVerify"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/validation/sms/change": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** change phone (`phone`, optional `ddi`) */
        patch: operations["patchValidationSmsChange"];
        trace?: never;
    };
    "/api/validation/docs/submit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** initial data (KYC level 1) */
        patch: operations["patchValidationDocsSubmit"];
        trace?: never;
    };
    "/api/validation/address/submit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** submit address */
        patch: operations["patchValidationAddressSubmit"];
        trace?: never;
    };
    "/api/validation/terms/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** accept terms/contracts */
        patch: operations["patchValidationTermsAccept"];
        trace?: never;
    };
    "/api/validation/link-confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** confirm e-mail validation link (`token`) */
        post: operations["postValidationLinkConfirm"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/address/lookup-by-postal-code": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** postal-code lookup (`cep`, plus any other scalar field, forwarded unchanged); no session needed */
        post: operations["postAddressLookupByPostalCode"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/update-profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** update profile; the path id is the session's own user id, an id in the body is dropped */
        patch: operations["patchUserUpdateProfile"];
        trace?: never;
    };
    "/api/user/update-address": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** update address */
        patch: operations["patchUserUpdateAddress"];
        trace?: never;
    };
    "/api/user/add-phone": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** add phone */
        patch: operations["patchUserAddPhone"];
        trace?: never;
    };
    "/api/user/check-password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** verify current password (`password`) */
        post: operations["postUserCheckPassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/change-password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** change password (`password` and the BFF's other fields); the path id is the session's own user id */
        post: operations["postUserChangePassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/two-factor": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** enable/disable second factor (`enabled`) */
        patch: operations["patchUserTwoFactor"];
        trace?: never;
    };
    "/api/user/store-document": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** upload KYC document: multipart/form-data, one file (at most 10485760 bytes), endpoint selfie | document-front | document-back | proof-of-address */
        post: operations["postUserStoreDocument"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/update-marketing": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** marketing preferences */
        patch: operations["patchUserUpdateMarketing"];
        trace?: never;
    };
    "/api/user/update-preferences": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** generic preference metadata; only the whitelisted keys of PREFERENCE_KEYS, any other key is a 400 */
        patch: operations["patchUserUpdatePreferences"];
        trace?: never;
    };
    "/api/user/update-pending-data": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** update pending data after login */
        patch: operations["patchUserUpdatePendingData"];
        trace?: never;
    };
    "/api/user/update-limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** responsible-gaming limits (spa_* fields of spec 2.6; money limits in cents) */
        patch: operations["patchUserUpdateLimits"];
        trace?: never;
    };
    "/api/user/timeout-limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** account pause/timeout */
        patch: operations["patchUserTimeoutLimits"];
        trace?: never;
    };
    "/api/user/self-exclusion": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** self-exclusion */
        patch: operations["patchUserSelfExclusion"];
        trace?: never;
    };
    "/api/user/login-history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** paginated login history, query `page` (default 1) */
        get: operations["getUserLoginHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/last-casino-games": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** last games played */
        get: operations["getUserLastCasinoGames"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/support-desk-token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** single-sign-on token for the support desk */
        get: operations["getUserSupportDeskToken"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/referrals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** list the user's referrals */
        post: operations["postUserReferrals"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/indication-stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** referral campaign v2 stats of the session's own user (external referral v2 service) */
        get: operations["getUserIndicationStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/user/referral-indicator": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** legacy referral v1 indicator (external referral v1 service) */
        get: operations["getUserReferralIndicator"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/wallet/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** reload wallet and rollover → { wallet, rollover, rolloverAccomplished, missing }; a failed rollover call is null and named in missing */
        post: operations["postWalletRefresh"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/wallet/transactions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** list transactions (filter by type, period, page); type `cashback` reads the cashback list */
        post: operations["postWalletTransactions"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/wallet/action": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** wallet action `bonus-transfer` or `cashback-transfer` (optional `amount` in cents, `bonus_id`) */
        post: operations["postWalletAction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/wallet/receipt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** withdrawal receipt (HTML or PDF) streamed through; body `transactionId` or `id` of the withdrawal */
        post: operations["postWalletReceipt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/payments/providers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** list providers: { deposit, withdraw }, filterable by `currency`; each with iconUrl and methodClass */
        get: operations["getPaymentsProviders"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/payments/deposit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** create deposit (DepositPayload, spec 2.7; creditAmount in cents); answers the deposit result, wallet balance in units */
        post: operations["postPaymentsDeposit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/payments/deposit-status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** poll deposit status, query `transactionId` */
        get: operations["getPaymentsDepositStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/payments/withdraw": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** withdraw (`amount` in cents, `method`; PIX, SPEI, bank or phone fields); one upstream attempt, repeats within 5 s answered once */
        post: operations["postPaymentsWithdraw"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/payments/bank-list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** list banks */
        get: operations["getPaymentsBankList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/payments/coupon": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** resolve coupon, query `code` */
        get: operations["getPaymentsCoupon"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/payments/pix-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** read (GET) or update (POST `pix_key`, `pix_key_type`) the user's PIX key (BR) */
        get: operations["getPaymentsPixKey"];
        put?: never;
        /** read (GET) or update (POST `pix_key`, `pix_key_type`) the user's PIX key (BR) */
        post: operations["postPaymentsPixKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/payments/bank-account": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** multi-action hub; body `type` is one of get-pix, update-pix, get-mex, save-mex, get-generic, save-generic */
        post: operations["postPaymentsBankAccount"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** paginated catalogue (category, provider, search); cacheable: answered from the shared catalogue cache */
        get: operations["getGamesList"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** legacy search: the list parameters in a JSON body, delegated to the list */
        post: operations["postGamesSearch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/category/{slug}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** games of one category (infinite scroll, cache first); query `search`, `page`, `per_page` */
        get: operations["getGamesCategoryBySlug"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/provider/{slug}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** games of one provider (cache first); query `search`, `page`, `per_page` */
        get: operations["getGamesProviderBySlug"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/by-slugs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** resolve many games by slug (`slugs`, comma-separated, at most 100) from the catalogue index, falling back to the detail; answers `{ data, missing }` in the order asked */
        get: operations["getGamesBySlugs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** start an authenticated game session: `slug` or `gameId`, `mode`, `device`, `language`; the answer never carries debug data */
        get: operations["getGamesStart"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/top-wins": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** top wins of the day; answered from the shared catalogue cache */
        get: operations["getGamesTopWins"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/statistics-dl": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** statistics of one game, query `slug`; answered from the shared catalogue cache, whose entries feed `stats-batch` */
        get: operations["getGamesStatisticsDl"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/stats-batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** statistics for many slugs (`{ slugs }`, 1-100) from the cache only, never upstream: `{ data: { <slug>: statistics }, missing }` */
        post: operations["postGamesStatsBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/games/vote": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the user's vote and the counts of one game, query `casinoGameId` */
        get: operations["getGamesVote"];
        put?: never;
        /** up/down vote on a game: `{ casinoGameId, vote: "up" | "down" }` */
        post: operations["postGamesVote"];
        /** remove the user's vote on a game, query `gameId` */
        delete: operations["deleteGamesVote"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/favorites": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** the user's favourite games */
        get: operations["getFavorites"];
        /** toggle a favourite game: `{ casinoGameId }` or `{ slug }` */
        put: operations["putFavorites"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/search/unified": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** unified casino + sportsbook search in parallel: `{ casino, sports, failed }`; a failed side is null and named in `failed` */
        post: operations["postSearchUnified"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/sports/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** first-party sportsbook search; query `search` (required), `limit`, `lang` */
        get: operations["getSportsSearch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/sports/launch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** authenticated sportsbook launch; query `lang`, `device`; debug fields of the answer are removed */
        get: operations["getSportsLaunch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/sports/anonymous-launch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** anonymous sportsbook launch; query `lang`, `device`; debug fields of the answer are removed */
        get: operations["getSportsAnonymousLaunch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/sports/partner-a-jwt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** issue a JWT for sportsbook partner A (the request body is ignored; `{}` is sent) */
        post: operations["postSportsPartnerAJwt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/sports/partner-b-token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** token for sportsbook partner B (the upstream path is kept exactly as the specification writes it) */
        get: operations["getSportsPartnerBToken"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/kyc/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** start KYC (normal, or recovery with `recovery=1`), query `source` */
        get: operations["getKycStart"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/kyc/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** poll KYC status, query `kyc_id` (recovery flow with `recovery=1`) */
        get: operations["getKycStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rewards/list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** paginated user rewards: body page (1…10000, default 1), per_page (1…100, default 20), type */
        post: operations["postRewardsList"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/rewards/redeem": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** redeem a reward (`reward_id`) */
        post: operations["postRewardsRedeem"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/income-report/available-years": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** available years */
        get: operations["getIncomeReportAvailableYears"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/income-report/generate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** generate report for a year (`year`) */
        post: operations["postIncomeReportGenerate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/income-report/status/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** poll report status */
        get: operations["getIncomeReportStatusById"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/album/bootstrap": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** refetch the whole album state: `{ campaign, progress, stickers, checkin }`, the four targets read in parallel */
        get: operations["getAlbumBootstrap"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/album/checkin": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** claim the check-in, query `claimType`: `daily` or `completion` */
        post: operations["postAlbumCheckin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/album/claim-featured": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** redeem a featured card: `featuredId` in the body or the query */
        post: operations["postAlbumClaimFeatured"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/album/open-pack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** open one pack (optional body `{ packId }`) */
        post: operations["postAlbumOpenPack"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/album/open-all-packs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** open every pack */
        post: operations["postAlbumOpenAllPacks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/album/mission-type": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** select the mission type, `casino` or `sportsbook` (`missionType` in the body or the query) */
        post: operations["postAlbumMissionType"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ftd-cashback/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** first-deposit cashback eligibility (external verifier function) */
        post: operations["postFtdCashbackVerify"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ftd-cashback/send-cashback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** trigger the cashback payout (external function) */
        post: operations["postFtdCashbackSendCashback"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/tracking/attribution": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** forward a server-to-server event to the attribution provider: its known fields checked, the provider's other scalar fields forwarded unchanged, the visitor's address and user agent added; answers { ok: true } */
        post: operations["postTrackingAttribution"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/version": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** build id for cache busting: `{ buildId }` (BUILD_ID, default the package version) */
        get: operations["getVersion"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/clear-cache": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** legacy: asks the browser to clear its cache (`Clear-Site-Data: "cache"`); answers { ok: true } */
        get: operations["getClearCache"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/cache/purge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** empty the proxy's caches on every instance (the purge generation moves; 503 `purge_unavailable` when the shared state cannot be reached) and the worker cache, to which the operator's JSON body goes as given (`paths` and `tags` checked); operator credential (CACHE_PURGE_TOKEN) required */
        post: operations["postCachePurge"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description spec 2.5 AuthUser */
        AuthUser: {
            id: number;
            email: string;
            username: string;
            name: string;
            first_name: string;
            last_name: string;
            phone: string;
            /** @description phone country prefix */
            ddi: string;
            birth_date: string;
            country: string;
            language: string;
            currency: string;
            /** @description a token of the BFF's user record; never the session JWT */
            token: string;
            mother_name: string;
            created_at: string;
            updated_at: string;
            last_login: string;
            gender: number;
            document: {
                [key: string]: unknown;
            } | null;
            country_data: {
                [key: string]: unknown;
            } | null;
            wallet: {
                [key: string]: unknown;
            } | null;
            is_active: number;
            cancelled_account: number;
            bonus_enabled: number;
            ftd_date: string | null;
            ftd_value: number;
            affiliation_code?: string;
            /** @description AuthLatestKyc (fields not shown by the specification) */
            latestKyc?: {
                [key: string]: unknown;
            };
        };
        /** @description spec 2.6 AuthUserInfo */
        AuthUserInfo: {
            validate_email_at: string;
            login_at: string;
            validate_sms_at: string;
            login_attempt_qty: number;
            strong_password: number;
            seven_days_since_last_login: boolean;
            force_request_kyc: boolean;
            two_factor_enabled: boolean;
            two_factor_type?: string;
            force_request_kyc_reasons?: {
                [key: string]: unknown;
            }[];
            two_factor_at?: string | null;
            two_factor_code?: string | null;
            latitude?: number;
            longitude?: number;
            location_at?: string;
            /** @description a JSON-encoded string */
            nationalities?: string;
            tc_accepted_at?: string | null;
            privacy_accepted_at?: string | null;
            lgpd_accepted_at?: string | null;
            law_accepted_at?: string | null;
            mkt_accepted_at?: string | null;
            spa_bet_limit?: number | null;
            spa_loss_limit?: number | null;
            spa_deposit_limit?: number | null;
            spa_withdrawal_limit?: number | null;
            spa_time_limit?: number | null;
            spa_period_limit?: string | null;
            spa_note?: string | null;
        };
        /** @description the cashback function's answer (fields not shown by the specification); every money field in integer cents */
        CashbackAnswer: {
            /** @description the cashback rate, in percent */
            percent?: number;
            /** @description the largest cashback paid (verify): integer cents, as the function sends it */
            max_amount?: number;
            /** @description the cashback sent (send-cashback): integer cents, as the function sends it */
            amount?: number;
        } & {
            [key: string]: unknown;
        };
        /** @description a catalogue page as the BFF answers it (game records: fields not shown by the specification); served from the proxy cache when fresh */
        CataloguePage: {
            [key: string]: unknown;
        };
        /** @description the deposit result as the BFF answers it (fields not shown by the specification). Money is in integer cents, with one exception: in the real-wallet record (`real_wallet`, else `wallet`) `balance` is in currency units and `balance_cents` keeps the original integer cents (spec 2.7 rule 2) */
        DepositAnswer: {
            /** @description the amount of the charge: integer cents, as the BFF sends it */
            amount?: number;
            /** @description the real-wallet record of a deposit answer: `balance` in currency units and `balance_cents` in integer cents (spec 2.7 rule 2); every other money field in integer cents, as the BFF sends it */
            real_wallet?: {
                /** @description currency units (spec 2.7 rule 2): the BFF's cents divided by 100, e.g. 1550.01 */
                balance: number;
                /** @description integer cents: the BFF's original `balance`, added by the proxy */
                balance_cents: number;
                /** @description the part of the balance that can be withdrawn: integer cents, as the BFF sends it */
                withdrawable_balance?: number;
                /** @description the bonus balance: integer cents, as the BFF sends it */
                bonus_balance?: number;
                /** @description the cashback balance: integer cents, as the BFF sends it */
                cashback_balance?: number;
                /** @description ISO 4217 code of every amount of the record */
                currency?: string;
            } & {
                [key: string]: unknown;
            };
            /** @description the real-wallet record of a deposit answer: `balance` in currency units and `balance_cents` in integer cents (spec 2.7 rule 2); every other money field in integer cents, as the BFF sends it */
            wallet?: {
                /** @description currency units (spec 2.7 rule 2): the BFF's cents divided by 100, e.g. 1550.01 */
                balance: number;
                /** @description integer cents: the BFF's original `balance`, added by the proxy */
                balance_cents: number;
                /** @description the part of the balance that can be withdrawn: integer cents, as the BFF sends it */
                withdrawable_balance?: number;
                /** @description the bonus balance: integer cents, as the BFF sends it */
                bonus_balance?: number;
                /** @description the cashback balance: integer cents, as the BFF sends it */
                cashback_balance?: number;
                /** @description ISO 4217 code of every amount of the record */
                currency?: string;
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** @description spec 2.2 LoginResponse without access_token */
        LoginResponse: {
            /** @description lifetime of the session, in seconds */
            expires_in: number;
            token_type: string;
            user: components["schemas"]["AuthUser"];
            userInfo: components["schemas"]["AuthUserInfo"];
        } | {
            type: "two_factor_code" | "cancelled_account";
        };
        /** @description a success without data */
        OkAnswer: {
            /** @constant */
            ok: true;
        };
        /** @description spec 2.3 Profile response */
        ProfileResponse: {
            user: components["schemas"]["AuthUser"];
            userInfo: components["schemas"]["AuthUserInfo"];
        };
        /** @description spec 2.8 provider (other fields as the BFF sends them) */
        ProviderView: {
            /** @description payment method slug */
            method?: string;
            slug?: string;
            /** @description icon reference `payments/<method>` */
            icon?: string;
            iconUrl: string | null;
            /** @description the class of the slug, which decides the user flow (spec 2.8) */
            methodClass: ("pix-like" | "spei" | "oxxo" | "checkout-page" | "card-form" | "wallet" | "redirect" | "external-redirect") | null;
            /** @description the smallest amount the method takes: integer cents, as the BFF sends it */
            min_amount?: number;
            /** @description the largest amount the method takes: integer cents, as the BFF sends it */
            max_amount?: number;
        } & {
            [key: string]: unknown;
        };
        /** @description spec 2.8 provider listing */
        ProvidersAnswer: {
            deposit: components["schemas"]["ProviderView"][];
            withdraw: components["schemas"]["ProviderView"][];
        };
        StatsBatchAnswer: {
            /** @description the cached statistics, by slug */
            data: {
                [key: string]: {
                    [key: string]: unknown;
                };
            };
            /** @description the slugs with no cached statistics */
            missing: string[];
        };
        /** @description the transactions (or cashback transactions) as the BFF answers them (fields not shown by the specification); every money field (`amount`, `balance`…) in integer cents */
        TransactionsAnswer: {
            [key: string]: unknown;
        };
        /** @description spec 2.3 ValidateDocumentResponse */
        ValidateDocumentResponse: {
            docnumber?: string;
            docnumber_valid?: boolean;
            birth_date?: string;
            gender?: string;
            mother_name?: string;
            name?: string;
        };
        VersionAnswer: {
            /** @description BUILD_ID, default the package version */
            buildId: string;
        };
        /** @description the bonus or cashback transfer result as the BFF answers it (fields not shown by the specification); every money field in integer cents */
        WalletActionAnswer: {
            /** @description the amount transferred: integer cents, as the BFF sends it */
            amount?: number;
        } & {
            [key: string]: unknown;
        };
        /** @description the BFF's wallet record, passed on unchanged: every money field (`balance`, `withdrawable_balance`, `bonus_balance`, `cashback_balance`…) in integer cents (other fields not shown by the specification) */
        WalletRecord: {
            /** @description the real balance: integer cents, as the BFF sends it */
            balance?: number;
            /** @description the part of the balance that can be withdrawn: integer cents, as the BFF sends it */
            withdrawable_balance?: number;
            /** @description the bonus balance: integer cents, as the BFF sends it */
            bonus_balance?: number;
            /** @description the cashback balance: integer cents, as the BFF sends it */
            cashback_balance?: number;
            /** @description ISO 4217 code of every amount of the record */
            currency?: string;
        } & {
            [key: string]: unknown;
        };
        /** @description spec 4.4 wallet and rollover */
        WalletRefreshAnswer: {
            wallet: components["schemas"]["WalletRecord"];
            rollover: {
                [key: string]: unknown;
            } | null;
            rolloverAccomplished: {
                [key: string]: unknown;
            } | null;
            /** @description the rollover parts the BFF could not give */
            missing: ("rollover" | "rolloverAccomplished")[];
        };
        /** @description the withdrawal result as the BFF answers it (fields not shown by the specification); every money field in integer cents */
        WithdrawAnswer: {
            /** @description the amount withdrawn: integer cents, as the BFF sends it */
            amount?: number;
        } & {
            [key: string]: unknown;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    postAuthLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "login": "demo@example.com",
                 *       "password": "Demo#2026"
                 *     }
                 */
                "application/json": {
                    login: string;
                    password: string;
                    captcha_token?: string;
                    app_source?: string;
                    two_factor_code?: number;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LoginResponse"];
                };
            };
        };
    };
    postAuthRegister: {
        parameters: {
            query?: {
                utm_src?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                    country: string;
                    nationalities: string;
                    optIn: boolean;
                    ddi?: string;
                    phone?: string;
                    name?: string;
                    birth_date?: string;
                    number?: string;
                    captcha_token?: string;
                    app_source?: string;
                    affiliation_code?: string;
                    utm_source?: string;
                    utm_campaign?: string;
                    utm_content?: string;
                    utm_medium?: string;
                    src?: string;
                    utm_src?: string;
                    ga_client_id?: string;
                    user_prudential_limit_active?: unknown;
                    provider?: string;
                    token?: string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LoginResponse"];
                };
            };
        };
    };
    postAuthLogout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OkAnswer"];
                };
            };
        };
    };
    postAuthLogoutAuto: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OkAnswer"];
                };
            };
        };
    };
    getAuthSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the session state, answered from the cookie alone (never upstream); a refused cookie is cleared */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        signedIn: true;
                        /** @description epoch seconds of the token's `exp`; `null` when the token has none */
                        expiresAt: number | null;
                    } | {
                        /** @constant */
                        signedIn: false;
                    };
                };
            };
        };
    };
    getAuthProfile: {
        parameters: {
            query?: {
                check_spa_again?: "1" | "0";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProfileResponse"];
                };
            };
        };
    };
    postAuthRecheckSpa: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProfileResponse"];
                };
            };
        };
    };
    postAuthRefresh: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description a new session cookie; the JWT is never in the body */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OkAnswer"];
                };
            };
        };
    };
    postAuthRecovery: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description One step of the password recovery, chosen by `step`; without `step`, the first step (`options`), whose body is the ForgotPasswordPayload `{ login, captcha_token? }` (spec 2.3). Each step takes only its own fields: `options`: login, captcha_token?; `by-email`: login, captcha_token?; `by-sms`: login, captcha_token?; `validate-code`: login, code, captcha_token?; `confirm`: login, code, password, password_confirmation?, captcha_token?. */
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description the step; absent: `options`
                     * @enum {string}
                     */
                    step?: "options" | "by-email" | "by-sms" | "validate-code" | "confirm";
                    /** @description every step */
                    login: string;
                    /** @description every step */
                    captcha_token?: string;
                    /** @description steps validate-code, confirm */
                    code?: string;
                    /** @description steps confirm */
                    password?: string;
                    /** @description steps confirm */
                    password_confirmation?: string;
                } & (unknown & unknown & unknown & unknown & unknown);
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAuthSocialByProvider: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                provider: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    token: string;
                    captcha_token?: string;
                    app_source?: string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LoginResponse"];
                };
            };
        };
    };
    postAuthValidateDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    number: string;
                    captcha_token?: string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidateDocumentResponse"];
                };
            };
        };
    };
    postLogsAuthLogout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    ref: string;
                    endpointCode: string;
                    errorCode: string;
                    status: number;
                    reason: string;
                    url: string;
                    initiator: string;
                    pathname: string;
                    timestamp: number;
                    hadCookie: boolean;
                    userAgentShort: string;
                };
            };
        };
        responses: {
            /** @description accepted (sampled into the log at 50%) */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    postValidationEmailSend: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Optional: the request may have no body. */
        requestBody?: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postValidationEmailVerify: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    code: string;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchValidationEmailChange: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postValidationSmsSend: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Optional: the request may have no body. */
        requestBody?: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postValidationSmsVerify: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    code: string;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchValidationSmsChange: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    phone: string;
                    ddi?: string;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchValidationDocsSubmit: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchValidationAddressSubmit: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchValidationTermsAccept: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postValidationLinkConfirm: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    token: string;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAddressLookupByPostalCode: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    cep: string;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserUpdateProfile: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserUpdateAddress: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserAddPhone: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postUserCheckPassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    password: string;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postUserChangePassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    password: string;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserTwoFactor: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    enabled: boolean;
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postUserStoreDocument: {
        parameters: {
            query?: {
                endpoint?: "selfie" | "document-front" | "document-back" | "proof-of-address";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /** @description the document (JPEG, PNG, WebP, HEIC or PDF, at most 10 MiB) */
                    file: string;
                };
            };
        };
        responses: {
            /**
             * @description Success.
             *
             *     The status is the upstream's (spec 4.12): 201 when it created the record, 200 otherwise.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /**
             * @description Success.
             *
             *     The status is the upstream's (spec 4.12): 201 when it created the record, 200 otherwise.
             */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserUpdateMarketing: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserUpdatePreferences: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    language?: string;
                    theme?: "light" | "dark" | "system";
                    odds_format?: "decimal" | "fractional" | "american";
                    timezone?: string;
                    notifications_email?: boolean;
                    notifications_sms?: boolean;
                    notifications_push?: boolean;
                    hide_balance?: boolean;
                    sound_enabled?: boolean;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserUpdatePendingData: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserUpdateLimits: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    spa_bet_limit?: number | null;
                    spa_loss_limit?: number | null;
                    spa_deposit_limit?: number | null;
                    spa_withdrawal_limit?: number | null;
                    spa_time_limit?: number | null;
                    spa_period_limit?: "daily" | "weekly" | "monthly" | null;
                    spa_note?: string | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserTimeoutLimits: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    patchUserSelfExclusion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getUserLoginHistory: {
        parameters: {
            query?: {
                page?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getUserLastCasinoGames: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getUserSupportDeskToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postUserReferrals: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Optional: the request may have no body. */
        requestBody?: {
            content: {
                "application/json": {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getUserIndicationStats: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getUserReferralIndicator: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postWalletRefresh: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Optional: the request may have no body. */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletRefreshAnswer"];
                };
            };
        };
    };
    postWalletTransactions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Optional: the request may have no body. */
        requestBody?: {
            content: {
                "application/json": {
                    type?: string;
                    period?: string;
                    start_date?: string;
                    end_date?: string;
                    page?: number;
                    per_page?: number;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransactionsAnswer"];
                };
            };
        };
    };
    postWalletAction: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    action: "bonus-transfer" | "cashback-transfer";
                    /** @description amount to transfer, in cents */
                    amount?: number;
                    bonus_id?: number | string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletActionAnswer"];
                };
            };
        };
    };
    postWalletReceipt: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    transactionId?: string | number;
                    id?: string | number;
                };
            };
        };
        responses: {
            /** @description the withdrawal receipt, streamed from the BFF as it comes */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                    "application/pdf": string;
                };
            };
        };
    };
    getPaymentsProviders: {
        parameters: {
            query?: {
                currency?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProvidersAnswer"];
                };
            };
        };
    };
    postPaymentsDeposit: {
        parameters: {
            query?: never;
            header?: {
                /** @description A key of this user action (1-255 visible ASCII characters; the browser SDK sends a fresh one per action). Forwarded upstream. Without it, the same session and body within 5 s count as one submission. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "userId": 1001,
                 *       "creditAmount": 5000,
                 *       "paymentMethod": "pix",
                 *       "currency": "BRL"
                 *     }
                 */
                "application/json": {
                    userId: number;
                    /** @description deposit amount, in cents */
                    creditAmount: number;
                    paymentMethod: string;
                    currency: string;
                    couponCode?: string;
                    utmCampaign?: string;
                    utmSource?: string;
                    utmMedium?: string;
                    utmContent?: string;
                    gaClientId?: string;
                    cardNumber?: string;
                    cardName?: string;
                    cardExpiryMonth?: string;
                    cardExpiryYear?: string;
                    cardCvv?: string;
                };
            };
        };
        responses: {
            /**
             * @description Success.
             *
             *     The status is the upstream's (spec 4.12): 201 when it created the record, 200 otherwise.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DepositAnswer"];
                };
            };
            /**
             * @description Success.
             *
             *     The status is the upstream's (spec 4.12): 201 when it created the record, 200 otherwise.
             */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DepositAnswer"];
                };
            };
        };
    };
    getPaymentsDepositStatus: {
        parameters: {
            query: {
                transactionId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the deposit status as the BFF answers it: real-wallet `balance` in currency units (spec 2.7 rule 2), every other amount in integer cents */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DepositAnswer"];
                };
            };
        };
    };
    postPaymentsWithdraw: {
        parameters: {
            query?: never;
            header?: {
                /** @description A key of this user action (1-255 visible ASCII characters; the browser SDK sends a fresh one per action). Forwarded upstream. Without it, the same session and body within 5 s count as one submission. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "amount": 2500,
                 *       "method": "pix",
                 *       "currency": "BRL",
                 *       "pix_key": "demo@example.com",
                 *       "pix_key_type": "email"
                 *     }
                 */
                "application/json": {
                    /** @description withdrawal amount, in cents */
                    amount: number;
                    method: string;
                    currency?: string;
                    pix_key?: string;
                    pix_key_type?: "cpf" | "cnpj" | "email" | "phone" | "random";
                    clabe?: string;
                    bank_code?: string;
                    bank_name?: string;
                    agency?: string;
                    account_number?: string;
                    account_type?: string;
                    account_holder?: string;
                    document?: string;
                    ddi?: string;
                    phone?: string;
                };
            };
        };
        responses: {
            /**
             * @description Success.
             *
             *     The status is the upstream's (spec 4.12): 201 when it created the record, 200 otherwise.
             */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawAnswer"];
                };
            };
            /**
             * @description Success.
             *
             *     The status is the upstream's (spec 4.12): 201 when it created the record, 200 otherwise.
             */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawAnswer"];
                };
            };
        };
    };
    getPaymentsBankList: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getPaymentsCoupon: {
        parameters: {
            query: {
                code: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getPaymentsPixKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postPaymentsPixKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    pix_key: string;
                    pix_key_type: "cpf" | "cnpj" | "email" | "phone" | "random";
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postPaymentsBankAccount: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    type: "get-pix" | "update-pix" | "get-mex" | "save-mex" | "get-generic" | "save-generic";
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getGamesList: {
        parameters: {
            query?: {
                "categories[]"?: string | string[];
                category?: string;
                "providers[]"?: string | string[];
                provider?: string;
                search?: string;
                page?: string;
                per_page?: string;
            };
            header?: {
                /** @description Entity tags of a stored answer (`W/` prefixes and lists accepted, or `*`): when one is the tag of any variant of the cached answer, the answer is 304 without a body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CataloguePage"];
                };
            };
        };
    };
    postGamesSearch: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    categories?: string | string[];
                    category?: string;
                    providers?: string | string[];
                    provider?: string;
                    search?: string;
                    page?: number | string;
                    per_page?: number | string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CataloguePage"];
                };
            };
        };
    };
    getGamesCategoryBySlug: {
        parameters: {
            query?: {
                search?: string;
                page?: string;
                per_page?: string;
            };
            header?: {
                /** @description Entity tags of a stored answer (`W/` prefixes and lists accepted, or `*`): when one is the tag of any variant of the cached answer, the answer is 304 without a body. */
                "If-None-Match"?: string;
            };
            path: {
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CataloguePage"];
                };
            };
        };
    };
    getGamesProviderBySlug: {
        parameters: {
            query?: {
                search?: string;
                page?: string;
                per_page?: string;
            };
            header?: {
                /** @description Entity tags of a stored answer (`W/` prefixes and lists accepted, or `*`): when one is the tag of any variant of the cached answer, the answer is 304 without a body. */
                "If-None-Match"?: string;
            };
            path: {
                slug: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CataloguePage"];
                };
            };
        };
    };
    getGamesBySlugs: {
        parameters: {
            query: {
                slugs: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            [key: string]: unknown;
                        }[];
                        /** @description the slugs with no record */
                        missing: string[];
                    };
                };
            };
        };
    };
    getGamesStart: {
        parameters: {
            query?: {
                slug?: string;
                gameId?: string;
                mode?: "real" | "demo";
                device?: "desktop" | "mobile";
                language?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getGamesTopWins: {
        parameters: {
            query?: never;
            header?: {
                /** @description Entity tags of a stored answer (`W/` prefixes and lists accepted, or `*`): when one is the tag of any variant of the cached answer, the answer is 304 without a body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getGamesStatisticsDl: {
        parameters: {
            query: {
                slug: string;
            };
            header?: {
                /** @description Entity tags of a stored answer (`W/` prefixes and lists accepted, or `*`): when one is the tag of any variant of the cached answer, the answer is 304 without a body. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postGamesStatsBatch: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    slugs: string[];
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StatsBatchAnswer"];
                };
            };
        };
    };
    getGamesVote: {
        parameters: {
            query: {
                casinoGameId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postGamesVote: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    casinoGameId: number | string;
                    vote: "up" | "down";
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    deleteGamesVote: {
        parameters: {
            query: {
                gameId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getFavorites: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    putFavorites: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    casinoGameId?: number | string;
                    slug?: string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postSearchUnified: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    search: string;
                    page?: number | string;
                    per_page?: number | string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        casino: {
                            [key: string]: unknown;
                        } | null;
                        sports: {
                            [key: string]: unknown;
                        } | null;
                        failed: ("casino" | "sports")[];
                    };
                };
            };
        };
    };
    getSportsSearch: {
        parameters: {
            query: {
                search: string;
                limit?: string;
                lang?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getSportsLaunch: {
        parameters: {
            query?: {
                lang?: string;
                device?: "desktop" | "mobile";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getSportsAnonymousLaunch: {
        parameters: {
            query?: {
                lang?: string;
                device?: "desktop" | "mobile";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postSportsPartnerAJwt: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getSportsPartnerBToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getKycStart: {
        parameters: {
            query?: {
                source?: string;
                recovery?: "1" | "0";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getKycStatus: {
        parameters: {
            query: {
                kyc_id: string;
                recovery?: "1" | "0";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postRewardsList: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Optional: the request may have no body. */
        requestBody?: {
            content: {
                "application/json": {
                    page?: number;
                    per_page?: number;
                    type?: string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postRewardsRedeem: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    reward_id: number | string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getIncomeReportAvailableYears: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postIncomeReportGenerate: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    year: number;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getIncomeReportStatusById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    getAlbumBootstrap: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description GET /campaigns/current */
                        campaign: {
                            [key: string]: unknown;
                        };
                        /** @description GET /users/me/progress */
                        progress: {
                            [key: string]: unknown;
                        };
                        /** @description GET /users/me/stickers */
                        stickers: {
                            [key: string]: unknown;
                        };
                        /** @description GET /users/me/checkin */
                        checkin: {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
    };
    postAlbumCheckin: {
        parameters: {
            query: {
                claimType: "daily" | "completion";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAlbumClaimFeatured: {
        parameters: {
            query?: {
                featuredId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAlbumOpenPack: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAlbumOpenAllPacks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postAlbumMissionType: {
        parameters: {
            query?: {
                missionType?: "casino" | "sportsbook";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
        };
    };
    postFtdCashbackVerify: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    userId?: number | string;
                    depositId?: number | string;
                    transactionId?: number | string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CashbackAnswer"];
                };
            };
        };
    };
    postFtdCashbackSendCashback: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    userId?: number | string;
                    depositId?: number | string;
                    transactionId?: number | string;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CashbackAnswer"];
                };
            };
        };
    };
    postTrackingAttribution: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    event: string;
                    eventId?: string;
                    timestamp?: number;
                    value?: number;
                    currency?: string;
                    clickId?: string;
                    utm_source?: string;
                    utm_medium?: string;
                    utm_campaign?: string;
                    utm_content?: string;
                    ga_client_id?: string;
                    properties?: {
                        [key: string]: string | number | boolean;
                    };
                } & {
                    [key: string]: string | number | boolean | null;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OkAnswer"];
                };
            };
        };
    };
    getVersion: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["VersionAnswer"];
                };
            };
        };
    };
    getClearCache: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description with `Clear-Site-Data: "cache"` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OkAnswer"];
                };
            };
        };
    };
    postCachePurge: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Optional: the request may have no body. */
        requestBody?: {
            content: {
                "application/json": {
                    paths?: string[];
                    tags?: string[];
                } & {
                    [key: string]: unknown;
                };
            };
        };
        responses: {
            /** @description Success. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        ok: true;
                        /** @description entries before the purge, by cache */
                        cleared: {
                            [key: string]: number;
                        };
                        /** @constant */
                        upstream: "purged";
                    };
                };
            };
        };
    };
}
