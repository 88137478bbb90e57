import { Type, type Static } from '@sinclair/typebox'
import { Uuid, Timestamp, StringEnum } from './common.js'
import { OrgRoleSchema, UserSchema } from './accounts.js'

const Email = Type.String({ format: 'email', maxLength: 254 })
const Password = Type.String({ minLength: 8, maxLength: 1024 })
const Name = Type.String({ minLength: 1, maxLength: 200 })
const LinkToken = Type.String({ minLength: 1, maxLength: 200 })
const AssignableRole = StringEnum(['admin', 'member'])

export const OrgUser = Type.Object({ id: Uuid, email: Type.String(), name: Type.String(), role: OrgRoleSchema,
  created_at: Timestamp })
export const ListUsersResponse = Type.Object({ success: Type.Literal(true), data: Type.Array(OrgUser) })
export const UserResponse = Type.Object({ success: Type.Literal(true), data: OrgUser })

export const UpdateUserBody = Type.Object({
  role: Type.Optional(OrgRoleSchema),
  name: Type.Optional(Name)
}, { additionalProperties: false, minProperties: 1 })
export type UpdateUserBody = Static<typeof UpdateUserBody>

export const InvitedWorkspace = Type.Object({ id: Uuid, role: AssignableRole }, { additionalProperties: false })

export const CreateInvitationBody = Type.Object({
  email: Email,
  role: Type.Optional(AssignableRole),
  workspaces: Type.Optional(Type.Array(InvitedWorkspace, { maxItems: 100 }))
}, { additionalProperties: false })
export type CreateInvitationBody = Static<typeof CreateInvitationBody>

export const Invitation = Type.Object({
  id: Uuid, email: Type.String(), role: AssignableRole, workspaces: Type.Array(InvitedWorkspace),
  created_at: Timestamp, expires_at: Timestamp
})
export const CreateInvitationResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    ...Invitation.properties,
    /** the single-use link: in this answer only */
    url: Type.String({ format: 'uri' }),
    /** whether the link was also sent to the address (SMTP configured and the server took it) */
    emailed: Type.Boolean()
  })
})
export const ListInvitationsResponse = Type.Object({ success: Type.Literal(true), data: Type.Array(Invitation) })

export const AcceptInvitationBody = Type.Object({
  token: LinkToken,
  password: Password,
  name: Type.Optional(Name),
  cookie: Type.Optional(Type.Boolean({ description: 'true: the new person is signed in to the console by its ' +
    'HttpOnly cookie and no token is returned (send `x-cairn-csrf: 1` too, as for login)' }))
}, { additionalProperties: false })
export type AcceptInvitationBody = Static<typeof AcceptInvitationBody>

export const AcceptInvitationResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    token: Type.Optional(Type.String({ description: 'absent when the session was set as the console\'s cookie' })),
    user: UserSchema, customerId: Uuid
  })
})

export const ChangePasswordBody = Type.Object({
  currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
  newPassword: Password
}, { additionalProperties: false })
export type ChangePasswordBody = Static<typeof ChangePasswordBody>

export const PasswordResetLinkResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ url: Type.String({ format: 'uri' }), expires_at: Timestamp, emailed: Type.Boolean() })
})

export const ResetPasswordBody = Type.Object({ token: LinkToken, newPassword: Password },
  { additionalProperties: false })
export type ResetPasswordBody = Static<typeof ResetPasswordBody>

export const WorkspaceMember = Type.Object({ user_id: Uuid, email: Type.String(), name: Type.String(),
  role: OrgRoleSchema })
export const ListMembersResponse = Type.Object({ success: Type.Literal(true), data: Type.Array(WorkspaceMember) })

export const UpdateMemberBody = Type.Object({ role: OrgRoleSchema }, { additionalProperties: false })
export type UpdateMemberBody = Static<typeof UpdateMemberBody>
export const UpdateMemberResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ workspace_id: Uuid, user_id: Uuid, role: OrgRoleSchema })
})
